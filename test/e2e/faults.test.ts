/**
 * Faults, each ending in a clear result or error, never a hang, never an orphan: a real pi
 * shepherd over RPC, real pi sheep in panes of a private tmux server (or the fake herdr), on the
 * scripted model. After each part, no pane the test created remains and no sheep pi is alive.
 *
 * "The model server is unreachable when a sheep starts": start never talks to the model (pi
 * starts fine without a model server, and the sheep sends no message), so such a sheep starts
 * and its first prompt fails with [provider_error]. What makes start fail is a pi that cannot
 * start: a model that does not exist (pi exits at once), a piCommand that exits, or one that
 * never becomes ready within startTimeout.
 */
import assert from "node:assert/strict";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { FAKE_HERDR_VERSIONS, type FakeHerdr } from "../support/fake-herdr.ts";
import { livingSheep } from "../support/leftovers.ts";
import { node22 } from "../support/rpc-shepherd.ts";
import { type Item, type Scene, tmuxPanes, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

describe("faults with real pi sheep in tmux", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  /** The sheep's second model server, which the tests take away. */
  let outage: ScriptedModel;
  let scene: Scene;
  let panes: () => Promise<string[]>;

  before(async () => {
    world = await e2eWorld("faults", { providers: ["outage"] });
    ({ tmux, model } = world);
    outage = world.providers.outage!;
    scene = world.scene();
    panes = tmuxPanes(tmux.socket);
  });

  after(() => world?.cleanup());

  it("a sheep whose pi exits at start (a model that does not exist) fails start with the reason; its pane and files are gone", async () => {
    const text = await scene.fails({ action: "start", agent: "echo", label: "nomodel", model: "nowhere/no-such-model" }, /^\[start_failed\] /);
    assert.match(text, /exit code 1/);
    assert.match(text, /no-such-model/, "the pane's last lines say what pi said");
    await scene.assertNothingLeft(panes, [tmux.userPane]);
  });

  it("the model server going away during a prompt fails the wait with the reason, and so does a prompt while it is down", async () => {
    const S = await scene.start("outage", { model: "outage/scripted-model" });
    const p1 = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "OUTAGE" }));
    await untilLogged(outage, "OUTAGE");
    await outage.close();
    const r1 = await scene.wait(p1, 60);
    assert.equal(r1.status, "failed", JSON.stringify(r1));
    assert.match(r1.error!, /^\[provider_error\] \S/);
    const p2 = await scene.prompt(S.agentId, directive({ reply: "still nothing" }));
    const r2 = await scene.wait(p2, 60);
    assert.equal(r2.status, "failed", JSON.stringify(r2));
    assert.match(r2.error!, /^\[provider_error\] \S/);
    const s = await scene.state(S.agentId);
    assert.deepEqual([s.state, s.paneAlive], ["idle", true], "the sheep itself lives on");
    await scene.ok({ action: "close", agentId: S.agentId });
  });

  it("pi killed mid-prompt fails the wait with [pi_exited] long before its timeout", async () => {
    const S = await scene.start("crash");
    const p = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "CRASH" }));
    await untilLogged(model, "CRASH");
    process.kill(S.pid, "SIGKILL");
    const r = await scene.wait(p, 60);
    assert.equal(r.status, "failed", JSON.stringify(r));
    assert.match(r.error!, /^\[pi_exited\] .*SIGKILL/);
    assert.equal((await scene.state(S.agentId)).state, "exited");
    await scene.fails({ action: "prompt", agentId: S.agentId, message: "hello?" }, /^\[agent_closed\] /);
    assert.equal(((await scene.ok({ action: "close", agentId: S.agentId })).details.closed as { alreadyClosed: boolean }).alreadyClosed, false);
    assert.ok(!(await panes()).includes(S.paneId), "the pane pi died in was closed");
  });

  it("prune after pi was killed: tmux keeps the dead pane, prune closes it and names the sheep", async () => {
    const S = await scene.start("dead");
    process.kill(S.pid, "SIGKILL");
    for (let i = 0; (await scene.state(S.agentId)).state !== "exited"; i++) {
      assert.ok(i < 100, "status never said exited");
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok((await panes()).includes(S.paneId), "tmux kept the pane pi died in");
    const r = await scene.ok({ action: "prune" });
    assert.match(r.text, new RegExp(`^Closed the dead pane of dead \\(${S.agentId}\\) and pruned it: its pi had exited \\(signal SIGKILL\\)\\.$`, "m"));
    assert.deepEqual(r.details.removed, [S.agentId]);
    assert.ok(!(await panes()).includes(S.paneId), "the dead pane is gone");
    await scene.fails({ action: "status", agentId: S.agentId }, /^\[unknown_agent\] /);
  });

  it("a pane killed during a prompt fails the wait with [pane_gone]", async () => {
    const S = await scene.start("killed");
    const p = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "KILLED" }));
    await untilLogged(model, "KILLED");
    await tmux.tmux(["kill-pane", "-t", S.paneId]);
    const r = await scene.wait(p, 60);
    assert.equal(r.status, "failed", JSON.stringify(r));
    assert.match(r.error!, /^\[pane_gone\] /);
    assert.deepEqual(await livingSheep(scene.agentDir, [S.pid]), [], "pi went with its pane");
    await scene.ok({ action: "close", agentId: S.agentId });
  });

  it("close during a wait: the concurrent wait returns cancelled", async () => {
    const S = await scene.start("closing");
    const p = await scene.prompt(S.agentId, directive({ reply: "cut short", delayMs: 120_000, tag: "CLOSING" }));
    await untilLogged(model, "CLOSING");
    const [w, c] = await scene.shepherd.callParallel([
      { action: "wait", promptId: p, timeout: 90 },
      { action: "close", agentId: S.agentId },
    ]);
    assert.equal(w!.isError, false, w!.text);
    assert.equal(c!.isError, false, c!.text);
    const item = (w!.details.results as Item[])[0]!;
    assert.equal(item.status, "cancelled", JSON.stringify(item));
    assert.match(item.error!, /^\[cancelled\] /);
    assert.deepEqual((c!.details.closed as { cancelledPromptIds: string[] }).cancelledPromptIds, [p]);
    const waitStarted = scene.shepherd.events.findIndex((e) => e.type === "tool_execution_update" && e.toolCallId === w!.toolCallId);
    assert.ok(waitStarted >= 0 && waitStarted < c!.endIndex, "the wait was already waiting when close finished");
    assert.ok(!(await panes()).includes(S.paneId));
  });

  it("an aborted tool call ends its wait with [aborted]; the sheep keeps its prompt and a later wait gets the answer", async () => {
    const S = await scene.start("aborted");
    const p = await scene.prompt(S.agentId, directive({ reply: "answered after all", delayMs: 8000, tag: "ABORTED" }));
    const [w] = await scene.shepherd.callParallel([{ action: "wait", promptId: p, timeout: 90 }], {
      whileRunning: async ([id]) => {
        await scene.shepherd.until((e) => e.type === "tool_execution_update" && e.toolCallId === id);
        const reply = await scene.shepherd.command({ type: "abort" });
        assert.equal(reply.success, true);
      },
    });
    assert.equal(w!.isError, true, w!.text);
    assert.match(w!.text, /^\[aborted\] /);
    assert.equal(model.log.find((l) => l.tag === "ABORTED")?.lastByteAt, undefined, "the wait ended before the sheep answered");
    const s = await scene.state(S.agentId);
    assert.deepEqual([s.state, s.activePromptId], ["working", p]);
    const r = await scene.wait(p, 60);
    assert.deepEqual([r.status, r.text], ["completed", "answered after all"]);
    await scene.ok({ action: "close", agentId: S.agentId });
  });

  it("afterwards no pane, sheep pi or sheep file is left", async () => {
    await scene.shepherd.stop();
    await scene.assertNothingLeft(panes, [tmux.userPane]);
  });
});

describe("a sheep whose pi cannot start", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let scene: Scene;

  before(async () => {
    world = await e2eWorld("faults", {
      agent: async (dir) => {
        // Stands in for pi: what it does is chosen by the --model it gets, so one shepherd shows both.
        const fakePi = join(dir, "fake-pi.mjs");
        await writeFile(
          fakePi,
          [
            'const model = process.argv[process.argv.indexOf("--model") + 1];',
            'if (model === "exits") { console.error("fake pi: cannot start"); process.exit(3); }',
            'console.log("fake pi: starting forever");',
            "setInterval(() => {}, 1000);",
          ].join("\n"),
        );
        await chmod(fakePi, 0o600);
        return { shepherdSettings: { startTimeout: 3, piCommand: [node22, fakePi] } };
      },
    });
    tmux = world.tmux;
    scene = world.scene();
  });

  after(() => world?.cleanup());

  it("a pi that exits at once fails start with its exit code and last words; nothing is left", async () => {
    const text = await scene.fails({ action: "start", agent: "echo", model: "exits" }, /^\[start_failed\] /);
    assert.match(text, /exit code 3/);
    assert.match(text, /fake pi: cannot start/);
    await scene.assertNothingLeft(tmuxPanes(tmux.socket), [tmux.userPane]);
  });

  it("a pi that never becomes ready fails start after startTimeout; its pane and process are gone", async () => {
    const text = await scene.fails({ action: "start", agent: "echo", model: "hangs" }, /^\[start_failed\] /);
    assert.match(text, /not ready after 3 s/);
    assert.match(text, /fake pi: starting forever/);
    await scene.assertNothingLeft(tmuxPanes(tmux.socket), [tmux.userPane]);
  });
});

describe("the tmux server gone", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let scene: Scene;

  before(async () => {
    world = await e2eWorld("faults");
    ({ tmux, model } = world);
    // Inside the user's tmux: when that server is gone there is nowhere to put a sheep.
    const inside = tmux.insideEnv();
    scene = world.scene({ env: { ...world.env, TMUX: inside.TMUX, TMUX_PANE: inside.TMUX_PANE } });
  });

  after(() => world?.cleanup());

  it("a wait fails with [pane_gone], start says [runtime_unavailable], close still works, nothing is left", async () => {
    const S = await scene.start("doomed");
    const p = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "DOOMED" }));
    await untilLogged(model, "DOOMED");
    await tmux.tmux(["kill-server"]);
    const r = await scene.wait(p, 60);
    assert.equal(r.status, "failed", JSON.stringify(r));
    assert.match(r.error!, /^\[pane_gone\] /);
    const text = await scene.fails({ action: "start", agent: "echo", label: "nowhere" }, /^\[runtime_unavailable\] /);
    assert.match(text, /tmux server is not running/);
    assert.equal(((await scene.ok({ action: "close", agentId: S.agentId })).details.closed as { alreadyClosed: boolean }).alreadyClosed, false);
    assert.equal((await scene.state(S.agentId)).state, "closed");
    await scene.assertNothingLeft(tmuxPanes(tmux.socket), []);
  });
});

// The herdr faults on every herdr generation the fake emulates (0.7.5, 0.8.2, 0.9.x).
for (const version of FAKE_HERDR_VERSIONS) {
  describe(`faults on herdr ${version} (the fake, backed by real tmux panes)`, { timeout: 300_000 }, () => {
    let world: E2eWorld | undefined;
    let fake: FakeHerdr;
    let model: ScriptedModel;
    let scene: Scene;
    let panes: () => Promise<string[]>;
    let baseline: string[];

    before(async () => {
      world = await e2eWorld("faults", { herdr: { version } });
      ({ model } = world);
      fake = world.herdr!.fake;
      scene = world.scene();
      // The shepherd's quit closes its sheep through herdr: bring it back up first.
      world.defer(() => fake.setDown(false));
      // The panes behind the fake are tmux panes: they are what must not be left.
      panes = async () => (await fake.tmux(["list-panes", "-a", "-F", "#{pane_id}"]).catch(() => "")).split("\n").filter(Boolean);
      baseline = await panes();
    });

    after(() => world?.cleanup());

    it("with the herdr server down, start says [runtime_unavailable] and leaves nothing", async () => {
      await fake.setDown(true);
      try {
        const text = await scene.fails({ action: "start", agent: "echo", label: "nowhere" }, /^\[runtime_unavailable\] /);
        assert.match(text, /server_not_running/);
        await scene.assertNothingLeft(panes, baseline);
      } finally {
        await fake.setDown(false);
      }
    });

    it("with a herdr server of another protocol, start says [runtime_unavailable] naming both versions and leaves nothing", async () => {
      const other = /^0\.9\./.test(version) ? "0.8.2" : "0.9.4";
      await fake.setServerVersion(other);
      try {
        const text = await scene.fails({ action: "start", agent: "echo", label: "mismatched" }, /^\[runtime_unavailable\] /);
        assert.match(
          text,
          new RegExp(`is herdr ${version.replaceAll(".", "\\.")} \\(protocol \\d+\\), but the running herdr server is herdr ${other.replaceAll(".", "\\.")}`),
        );
        await scene.assertNothingLeft(panes, baseline);
      } finally {
        await fake.setServerVersion(undefined);
      }
    });

    it("herdr shows a real pi sheep's own state: idle once started, working during a prompt, idle after (its reports, not herdr's screen rule)", async () => {
      const S = await scene.start("watched");
      const shown = async () => {
        const r = await fake.herdr(["agent", "get", S.paneId]);
        return r.exitCode === 0 ? (JSON.parse(r.stdout) as { result: { agent: { agent_status: string } } }).result.agent.agent_status : undefined;
      };
      const until = async (want: string) => {
        for (let i = 0; i < 600 && (await shown()) !== want; i++) await new Promise((r) => setTimeout(r, 50));
        assert.equal(await shown(), want);
      };
      await until("idle");
      const p = await scene.prompt(S.agentId, directive({ reply: "watched", delayMs: 3000, tag: "WATCHED" }));
      await untilLogged(model, "WATCHED");
      await until("working");
      assert.deepEqual([(await scene.wait(p, 60)).status], ["completed"]);
      await until("idle");
      const reports = (await fake.calls()).filter((c) => c.argv[1] === "report-agent" && c.argv[2] === S.paneId);
      assert.ok(
        reports.every((c) => c.argv.slice(3, 7).join(" ") === "--source pi-shepherd --agent pi"),
        JSON.stringify(reports.map((c) => c.argv)),
      );
      await scene.ok({ action: "close", agentId: S.agentId });
    });

    it("a sheep answers a wait while the herdr server is down: results travel as files", async () => {
      const S = await scene.start("steady");
      const p = await scene.prompt(S.agentId, directive({ reply: "answered without herdr", delayMs: 3000, tag: "STEADY" }));
      await untilLogged(model, "STEADY");
      await fake.setDown(true);
      try {
        const r = await scene.wait(p, 60);
        assert.deepEqual([r.status, r.text], ["completed", "answered without herdr"]);
      } finally {
        await fake.setDown(false);
      }
      await scene.ok({ action: "close", agentId: S.agentId });
    });

    it("with the herdr server down, a sheep whose pane dies fails the wait instead of running into its timeout", async () => {
      const S = await scene.start("orphaned");
      const p = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "ORPHANED" }));
      await untilLogged(model, "ORPHANED");
      await fake.setDown(true);
      try {
        await fake.tmux(["kill-pane", "-t", await fake.tmuxPaneOf(S.paneId)]);
        const r = await scene.wait(p, 60);
        assert.equal(r.status, "failed", JSON.stringify(r));
        assert.match(r.error!, /^\[pi_exited\] /);
      } finally {
        await fake.setDown(false);
      }
      await scene.ok({ action: "close", agentId: S.agentId });
    });

    it("afterwards no pane, sheep pi or sheep file is left", async () => {
      await scene.shepherd.stop();
      await scene.assertNothingLeft(panes, baseline);
    });
  });
}
