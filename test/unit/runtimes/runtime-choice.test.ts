import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isShepherdError } from "../../../src/domain/errors.ts";
import { chooseRuntime, type RuntimeProbes } from "../../../src/runtimes/choose.ts";

/** Probes that answer as told and count how often they were asked. */
function probes(herdr: boolean | Error, tmux: boolean | Error) {
  const asked = { herdr: 0, tmux: 0 };
  const answer = (v: boolean | Error) => (v instanceof Error ? Promise.reject(v) : Promise.resolve(v));
  const p: RuntimeProbes = {
    herdrServerAnswers: () => {
      asked.herdr++;
      return answer(herdr);
    },
    tmuxInstalled: () => {
      asked.tmux++;
      return answer(tmux);
    },
  };
  return { p, asked };
}

describe("runtime choice: explicit", () => {
  for (const name of ["herdr", "tmux"] as const) {
    it(`uses ${name} when the setting asks for it, without probing, even where it cannot work`, async () => {
      const { p, asked } = probes(false, false);
      assert.equal(await chooseRuntime({ setting: name, env: {}, probes: p }), name);
      assert.deepEqual(asked, { herdr: 0, tmux: 0 });
    });

    it(`uses ${name} when PI_SHEPHERD_RUNTIME asks for it, over the setting and over where pi runs`, async () => {
      const other = name === "herdr" ? "tmux" : "herdr";
      const env = { PI_SHEPHERD_RUNTIME: name, HERDR_ENV: "1", TMUX: "/tmp/tmux-0/default,1,0" };
      const { p, asked } = probes(other === "herdr", other === "tmux");
      assert.equal(await chooseRuntime({ setting: other, env, probes: p }), name);
      assert.deepEqual(asked, { herdr: 0, tmux: 0 });
    });
  }

  it("accepts surrounding spaces and any letter case", async () => {
    const { p } = probes(false, false);
    assert.equal(await chooseRuntime({ setting: " TMUX ", env: {}, probes: p }), "tmux");
    assert.equal(await chooseRuntime({ env: { PI_SHEPHERD_RUNTIME: "Herdr" }, probes: p }), "herdr");
  });

  it("lets PI_SHEPHERD_RUNTIME=auto override an explicit setting", async () => {
    const { p } = probes(false, true);
    assert.equal(await chooseRuntime({ setting: "herdr", env: { PI_SHEPHERD_RUNTIME: "auto" }, probes: p }), "tmux");
  });

  it("ignores an empty PI_SHEPHERD_RUNTIME", async () => {
    const { p } = probes(true, true);
    assert.equal(await chooseRuntime({ setting: "tmux", env: { PI_SHEPHERD_RUNTIME: "  " }, probes: p }), "tmux");
  });

  it("refuses an unknown setting with [invalid_params], naming where it came from", async () => {
    const { p } = probes(true, true);
    await assert.rejects(chooseRuntime({ setting: "screen", env: {}, probes: p }), (e: unknown) => {
      assert.ok(isShepherdError(e, "invalid_params"));
      assert.match(e.message, /^\[invalid_params\] unknown runtime "screen" in the runtime setting; use auto, herdr or tmux$/);
      return true;
    });
    await assert.rejects(chooseRuntime({ setting: "herdr", env: { PI_SHEPHERD_RUNTIME: "zellij" }, probes: p }), (e: unknown) => {
      assert.ok(isShepherdError(e, "invalid_params"));
      assert.match(e.message, /"zellij" in PI_SHEPHERD_RUNTIME/);
      return true;
    });
  });
});

describe("runtime choice: auto", () => {
  it("is the default when nothing is set", async () => {
    const { p } = probes(false, true);
    assert.equal(await chooseRuntime({ env: {}, probes: p }), "tmux");
  });

  it("picks herdr inside herdr without probing, even when TMUX is also set", async () => {
    const { p, asked } = probes(false, true);
    assert.equal(await chooseRuntime({ setting: "auto", env: { HERDR_ENV: "1", TMUX: "/tmp/s,1,0" }, probes: p }), "herdr");
    assert.deepEqual(asked, { herdr: 0, tmux: 0 });
  });

  it("picks tmux inside tmux without probing", async () => {
    const { p, asked } = probes(true, true);
    assert.equal(await chooseRuntime({ setting: "auto", env: { TMUX: "/tmp/s,1,0" }, probes: p }), "tmux");
    assert.deepEqual(asked, { herdr: 0, tmux: 0 });
  });

  it("does not count HERDR_ENV other than 1 as inside herdr", async () => {
    const { p } = probes(false, true);
    assert.equal(await chooseRuntime({ setting: "auto", env: { HERDR_ENV: "0" }, probes: p }), "tmux");
  });

  it("outside both, picks herdr when a herdr server answers, before asking about tmux", async () => {
    const { p, asked } = probes(true, true);
    assert.equal(await chooseRuntime({ setting: "auto", env: {}, probes: p }), "herdr");
    assert.deepEqual(asked, { herdr: 1, tmux: 0 });
  });

  it("outside both, picks tmux when no herdr server answers and tmux is installed", async () => {
    const { p, asked } = probes(false, true);
    assert.equal(await chooseRuntime({ setting: "auto", env: {}, probes: p }), "tmux");
    assert.deepEqual(asked, { herdr: 1, tmux: 1 });
  });

  it("treats a probe that throws as finding nothing", async () => {
    const { p } = probes(new Error("spawn failed"), true);
    assert.equal(await chooseRuntime({ setting: "auto", env: {}, probes: p }), "tmux");
  });

  it("fails with [runtime_unavailable] naming both and how to install them when neither is there", async () => {
    for (const [herdr, tmux] of [
      [false, false],
      [false, new Error("no which")],
    ] as const) {
      const { p } = probes(herdr, tmux);
      await assert.rejects(chooseRuntime({ setting: "auto", env: {}, probes: p }), (e: unknown) => {
        assert.ok(isShepherdError(e, "runtime_unavailable"));
        assert.match(e.message, /^\[runtime_unavailable\] /);
        assert.match(e.message, /herdr\.dev/);
        assert.match(e.message, /release binary/);
        assert.match(e.message, /apt-get install tmux/);
        assert.match(e.message, /brew install tmux/);
        return true;
      });
    }
  });
});
