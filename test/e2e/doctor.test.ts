/**
 * The doctor with a real pi shepherd over RPC: all pass on a healthy setup; a bad settings file,
 * a stale record and a forged orphan pane each named with the fix that cleans it (and the fix
 * works); and with tmux missing from PATH, the checks that fail, and the verdict a start adds to
 * its [runtime_unavailable].
 */
import assert from "node:assert/strict";
import { execa } from "execa";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { recordTrustDecision } from "../../src/project-trust.ts";
import type { Check } from "../../src/doctor/types.ts";
import { shepherdEnv } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { testNode } from "../support/rpc-shepherd.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

type Report = { checks: Check[]; counts: { pass: number; warn: number; fail: number } };

describe("doctor with real pi", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let dir: string;
  let tmux: PrivateTmux;
  let agentDir: string;
  let work: string;
  let scene: Scene | undefined;
  let bare: Scene | undefined;

  const doctor = async (s: Scene): Promise<Report> => (await s.ok({ action: "doctor" })).details as unknown as Report;
  const notPassing = (r: Report) => r.checks.filter((c) => c.verdict !== "pass").map((c) => `${c.verdict} ${c.name}: ${c.detail} => ${c.fix}`);

  before(async () => {
    world = await e2eWorld("doctor", { work: true });
    ({ dir, tmux, agentDir, cwd: work } = world);
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("a healthy setup: every check passes, and doctor and /shepherd doctor say so", async () => {
    const r = await doctor(scene!);
    assert.deepEqual(notPassing(r), []);
    const names = r.checks.map((c) => c.name);
    for (const n of ["node", "pi", "pi command", "runtime", "tmux", "herdr", "environment", "state dir", "settings", "agents", "records", "orphan panes"]) {
      assert.ok(names.includes(n), `checks ${n}: ${names.join(", ")}`);
    }
    const of = (n: string) => r.checks.find((c) => c.name === n)!.detail;
    assert.match(of("runtime"), /^tmux, because PI_SHEPHERD_RUNTIME asks for it$/);
    assert.match(of("pi"), /^@earendil-works\/pi-coding-agent 1\.6\.\d+|^@mariozechner\/pi-coding-agent 0\.73\.\d+/);
    assert.match(of("pi command"), /--version prints \d+\.\d+\.\d+/);
    assert.match(of("environment"), new RegExp(`PI_SHEPHERD_TMUX_SOCKET=${tmux.socket}`));
    const [notice] = await scene!.shepherd.slash("/shepherd doctor");
    assert.equal(notice!.level, "info");
    assert.match(notice!.text, new RegExp(`^Doctor: ${r.checks.length} pass, 0 warn, 0 fail\\. Nothing was changed\\.\\n\\[pass\\] node: `));
  });

  it("a bad settings file: each problem is named with the file to fix", async () => {
    const userFile = join(agentDir, "pi-shepherd", "settings.json");
    await writeFile(userFile, JSON.stringify({ waitTimeout: "soon", colour: "blue" }));
    await mkdir(join(work, ".pi"), { recursive: true });
    await writeFile(join(work, ".pi", "shepherd.json"), JSON.stringify({ models: { fast: "evil/model" } }));
    // The person trusted the project (/shepherd trust): even then, its user-only keys are refused.
    await recordTrustDecision(agentDir, work, "trusted");
    const r = await doctor(scene!);
    assert.deepEqual(notPassing(r), [
      `warn settings: ${userFile}: "waitTimeout" must be a whole number of seconds above 0; kept 1200 => edit ${userFile}`,
      `warn settings: ${userFile}: unknown key "colour" (known: ${/known: ([^)]*)\)/.exec(r.checks.find((c) => c.detail.includes("colour"))!.detail)![1]}) => edit ${userFile}`,
      `warn settings: ${join(work, ".pi", "shepherd.json")}: "models" can only be set in the user's settings (${userFile}); ignored here => remove it from ${join(work, ".pi", "shepherd.json")}; set it in ${userFile} if you want it`,
    ]);
    await rm(userFile);
    await rm(join(work, ".pi"), { recursive: true });
    assert.deepEqual(notPassing(await doctor(scene!)), [], "fixed, the check passes again");
  });

  it("a stale record and a forged orphan pane: each named with the command that cleans it, and the command works", async () => {
    const stale = await scene!.start("stale");
    await tmux.tmux(["kill-pane", "-t", stale.paneId]);
    const forged = (await tmux.tmux(["new-window", "-d", "-t", "user", "-P", "-F", "#{pane_id}"])).trim();
    await tmux.tmux(["set-option", "-p", "-t", forged, "@pi_shepherd_agent", "a_forged0000"]);
    const r = await doctor(scene!);
    const staleCheck = r.checks.find((c) => c.name === "stale record")!;
    assert.deepEqual(staleCheck, {
      name: "stale record",
      verdict: "warn",
      detail: `${stale.agentId} (stale) on tmux pane ${stale.paneId}: the pane is gone`,
      fix: "/shepherd prune",
    });
    const orphan = r.checks.find((c) => c.name === "orphan pane")!;
    assert.deepEqual(orphan, {
      name: "orphan pane",
      verdict: "warn",
      detail: `tmux pane ${forged} carries the mark of a_forged0000, which no record knows`,
      fix: `tmux -S '${tmux.socket}' kill-pane -t '${forged}'`,
    });
    assert.equal(notPassing(r).length, 2, notPassing(r).join("\n"));
    assert.ok((await tmuxPanes(tmux.socket)()).includes(forged), "the doctor changed nothing");
    // The fixes, as a person would run them.
    await scene!.shepherd.slash("/shepherd prune");
    await execa("sh", ["-c", orphan.fix!]);
    assert.deepEqual(notPassing(await doctor(scene!)), []);
  });

  it("with tmux missing from PATH: the runtime, tmux and herdr fail with their fixes, and a start's error carries the verdict", async () => {
    // Only node on PATH: pi itself is started by absolute path.
    const bin = join(dir, "bin");
    await mkdir(bin);
    await symlink(testNode, join(bin, "node"));
    const env = { ...shepherdEnv(agentDir, {}), PATH: bin };
    bare = world!.scene({ env });
    const r = await doctor(bare);
    assert.deepEqual(
      r.checks.filter((c) => c.verdict === "fail").map((c) => [c.name, c.fix]),
      [
        [
          "runtime",
          "install tmux (apt-get install tmux, or brew install tmux); or install herdr (https://herdr.dev), or set PI_SHEPHERD_HERDR_BIN to its executable and start it by running `herdr`",
        ],
        ["tmux", "install tmux (apt-get install tmux, or brew install tmux)"],
        ["herdr", "install herdr (https://herdr.dev), or set PI_SHEPHERD_HERDR_BIN to its executable"],
      ],
    );
    assert.equal(r.checks.find((c) => c.name === "tmux")!.detail, "not found on PATH");
    const text = await bare.fails({ action: "start", agent: "echo" }, /^\[runtime_unavailable\] pi-shepherd needs herdr or tmux/);
    assert.match(
      text,
      /\nDoctor: 3 fail: runtime: .*; tmux: not found on PATH \(fix: install tmux \(apt-get install tmux, or brew install tmux\)\); herdr: herdr not found \(fix: install herdr/,
    );
    const [notice] = await bare.shepherd.slash("/shepherd doctor");
    assert.equal(notice!.level, "error");
    const audit = (await readFile(join(agentDir, "pi-shepherd", "audit.ndjson"), "utf8"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; reason?: string; action?: string });
    assert.deepEqual(audit.at(-1), { ...audit.at(-1), event: "failure", reason: "runtime_unavailable", action: "start" });
  });
});
