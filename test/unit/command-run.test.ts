import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runShepherdCommand, type CommandDeps } from "../../src/command/run.ts";
import { ShepherdError } from "../../src/core/errors.ts";
import { Shepherd } from "../../src/core/shepherd.ts";
import { loadSettings, type LoadedSettings } from "../../src/settings.ts";
import { report, type DoctorReport } from "../../src/doctor/types.ts";
import type { AuditEvent } from "../../src/ports/audit.ts";
import { runCommand } from "../../src/tool/entry.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { MemoryWorld } from "../support/memory-world.ts";

/** /shepherd over the real dispatch and core, on an in-memory multiplexer. */
describe("/shepherd subcommands run the tool's core", () => {
  let root: string;
  let world: MemoryWorld;
  let shepherd: Shepherd;
  let clock: FakeClock;
  let loaded: LoadedSettings;
  const dispatched: Record<string, unknown>[] = [];
  let deps: CommandDeps;
  let doctorReport: DoctorReport = report([]);
  const logAsked: { limit: number; agent?: string }[] = [];
  let logEvents: AuditEvent[] = [];

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-command-"));
    await mkdir(join(root, "bundled"));
    await mkdir(join(root, "work", "sub"), { recursive: true });
    await writeFile(join(root, "bundled", "scout.md"), "---\nname: scout\ndescription: looks around\ntools: read, grep\n---\nLook.\n");
    await writeFile(join(root, "bundled", "broken.md"), "---\nname: broken\n---\n");
    await mkdir(join(root, "agent", "pi-shepherd"), { recursive: true });
    await writeFile(join(root, "agent", "pi-shepherd", "settings.json"), JSON.stringify({ placement: "pane", colour: "blue" }));
    loaded = await loadSettings(join(root, "agent"), join(root, "work"));
    world = new MemoryWorld();
    clock = new FakeClock();
    shepherd = new Shepherd({ runtime: world.runtime, host: world.host, owner: "s", clock });
    deps = {
      execute: (command) => {
        dispatched.push(command);
        return runCommand(command, {
          context: async () => ({
            shepherd,
            settings: loaded.settings,
            cwd: join(root, "work"),
            agentDir: join(root, "agent"),
            bundledDir: join(root, "bundled"),
            trust: { hasUI: false },
          }),
          doctor: async () => doctorReport,
        });
      },
      log: async (o) => {
        logAsked.push(o);
        return logEvents;
      },
      settings: async () => ({ loaded, runtime: "tmux" }),
      now: () => clock.now(),
    };
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const one = async (args: string) => {
    const notices = await runShepherdCommand(args, deps);
    assert.equal(notices.length, 1, JSON.stringify(notices));
    return notices[0]!;
  };

  it("no argument shows the herd and a short help", async () => {
    const notices = await runShepherdCommand("", deps);
    assert.equal(notices.length, 2);
    assert.match(notices[0]!.text, /^No live sheep\. Start one with \/shepherd start <agent>/);
    assert.match(notices[1]!.text, /^\/shepherd <subcommand> \(no argument: the herd and this help\)\n/);
    for (const sub of ["herd", "sheep", "start", "status", "read", "close", "prune", "settings"]) assert.match(notices[1]!.text, new RegExp(`\\n  ${sub} `));
    assert.deepEqual(dispatched.pop(), { action: "herd" });
  });

  it("sheep lists definitions and the skipped file, as a warning", async () => {
    const n = await one("agents");
    assert.equal(n.level, "warning");
    assert.match(n.text, /^Agent definitions \(scope user\):\n- scout \(bundled\): looks around \[tools: read, grep\]/);
    assert.match(n.text, /broken\.md: missing required field "description"/);
    assert.deepEqual(dispatched.pop(), { action: "sheep" });
  });

  it("start, status, read and close work by label through the tool's actions", async () => {
    const started = await one("start scout --label recon --cwd sub");
    assert.equal(started.level, "info");
    assert.match(started.text, /^Started "recon" \(scout\) as a_\w{10} in tmux pane %1, cwd .*\/work\/sub; it is idle\./);
    assert.deepEqual(dispatched.at(-1), { action: "start", agent: "scout", label: "recon", cwd: "sub" });
    assert.deepEqual(
      world.calls.filter((c) => c.startsWith("create")),
      ["create %1 pane"],
      "the placement setting applies as for the tool",
    );
    const agentId = [...shepherd.registry.agents.keys()][0]!;

    const status = await one("status recon");
    assert.match(status.text, new RegExp(`^recon \\(${agentId}, scout\\): idle · tmux · 0s old`));
    assert.deepEqual(dispatched.at(-1), { action: "status", target: "recon" }, "the label goes to the tool's action as it is");

    await clock.advance(125_000, 125_000);
    const herd = await one("herd");
    assert.match(herd.text, new RegExp(`^Herd \\(1\\):\\n  recon \\(${agentId}, scout\\): idle · tmux · 2m old$`));

    assert.equal(
      (await one("read recon")).text,
      `recon (${agentId}, scout) has no conversation yet: its session file /sessions/${agentId}.jsonl does not exist.`,
    );
    const screen = await one("read recon --source screen --lines 3");
    assert.equal(screen.text, `Screen of recon (${agentId}, scout):\npane of recon`);
    assert.deepEqual(dispatched.at(-1), { action: "read", target: "recon", source: "screen", lines: 3 });
    for (const [i, answer] of ["first answer", "second\nanswer"].entries()) {
      const { details } = await deps.execute({ action: "prompt", target: "recon", message: `question ${i + 1}` });
      world.answer(agentId, (details.prompt as { promptId: string }).promptId, answer);
    }
    assert.equal(
      (await one("read recon --turns 1")).text,
      `The last turn of recon (${agentId}, scout), from /sessions/${agentId}.jsonl; earlier ones are not shown:\n\n> question 2\nsecond\nanswer`,
    );

    const closed = await one(`close ${agentId}`);
    assert.equal(closed.text, `Closed recon (${agentId}); its session file is kept at /sessions/${agentId}.jsonl.`);
    assert.deepEqual(dispatched.at(-1), { action: "close", target: agentId });
    assert.match((await one("status recon")).text, /^\[unknown_agent\] no live sheep with id or label "recon"/);
    assert.match((await one(`status ${agentId}`)).text, /: closed\.$/, "a closed sheep still answers by id");
  });

  it("prune forgets a sheep whose pane was killed", async () => {
    await one("start scout --label gone");
    await one("start scout --label stays");
    const gone = [...shepherd.registry.agents.values()].find((a) => a.label === "gone")!;
    world.killPane(gone.agentId);
    assert.equal((await one("prune")).text, `Pruned 1: ${gone.agentId}.`);
    assert.match((await one("herd")).text, /^Herd \(1\):\n {2}stays /);
    assert.equal((await one("prune")).text, "Nothing to prune: every recorded pane is alive.");
  });

  it("failures are error notices that start with their [code]", async () => {
    const cases: [string, RegExp][] = [
      ["start nosuch", /^\[unknown_definition\] no agent definition named "nosuch"/],
      ["start scout --placement sideways", /^\[invalid_params\] "placement" must be one of "tab", "pane", "workspace"/],
      ["start scout --cwd nowhere", /^\[invalid_params\] cwd "nowhere" is not an existing directory/],
      ["read stays --lines many", /^\[invalid_params\] "lines" must be a number/],
      ["read nobody", /^\[unknown_agent\]/],
      ["close p_0000000000", /^\[unknown_agent\] "p_0000000000" is a promptId/],
      ["sheep everything", /^\[invalid_params\] "agentScope" must be one of/],
      ["frobnicate", /^\[invalid_params\] unknown subcommand/],
    ];
    for (const [args, re] of cases) {
      const n = await one(args);
      assert.equal(n.level, "error", args);
      assert.match(n.text, re, args);
    }
  });

  it("doctor shows each check with its fix, at the level of the worst verdict", async () => {
    doctorReport = report([
      { name: "node", verdict: "pass", detail: "Node v22" },
      { name: "tmux", verdict: "fail", detail: "not found on PATH", fix: "install tmux" },
    ]);
    const n = await one("doctor");
    assert.equal(n.level, "error");
    assert.match(
      n.text,
      /^Doctor: 1 pass, 0 warn, 1 fail\. Nothing was changed\.\n\[pass\] node: Node v22\n\[fail\] tmux: not found on PATH\n +fix: install tmux$/,
    );
    doctorReport = report([{ name: "node", verdict: "pass", detail: "Node v22" }]);
    assert.equal((await one("doctor")).level, "info");
    assert.match((await one("doctor now")).text, /^\[invalid_params\] unexpected "now"\. Usage: \/shepherd doctor$/);
  });

  it("log shows the last events readably, of one sheep with --agent, and plain even when the file was forged", async () => {
    logEvents = [
      {
        event: "start",
        time: "2026-01-02T03:04:05.678Z",
        owner: "1:x",
        agentId: "a_0000000001",
        label: "recon",
        agent: "scout",
        runtime: "tmux",
        paneId: "%3",
      },
      { event: "prompt", time: "2026-01-02T03:04:06.000Z", owner: "1:x", agentId: "a_0000000001", label: "recon", promptId: "p_0000000001", bytes: 12 },
      {
        event: "result",
        time: "2026-01-02T03:04:08.000Z",
        owner: "1:x",
        agentId: "a_0000000001",
        label: "re\u001b[2Jcon",
        promptId: "p_0000000001",
        status: "completed",
        durationMs: 1500,
        usage: { input: 10, output: 20 },
      },
      { event: "refusal", time: "2026-01-02T03:04:09.000Z", owner: "1:x", action: "start", reason: "trust", error: "[project_agent_refused] no" },
    ];
    const n = await one("log 4 --agent recon");
    assert.deepEqual(logAsked.at(-1), { limit: 4, agent: "recon" });
    assert.equal(
      n.text,
      [
        "Audit log of recon, last 4 (UTC):",
        "  2026-01-02 03:04:05  start   recon (a_0000000001) scout on tmux pane %3",
        "  2026-01-02 03:04:06  prompt  recon (a_0000000001) p_0000000001 12 bytes",
        "  2026-01-02 03:04:08  result  re?[2Jcon (a_0000000001) p_0000000001 completed in 1.5s ↑10 ↓20",
        "  2026-01-02 03:04:09  refusal start [trust] [project_agent_refused] no",
      ].join("\n"),
    );
    await one("log");
    assert.deepEqual(logAsked.at(-1), { limit: 20 });
    assert.match((await one("log 0")).text, /^\[invalid_params\] N must be a whole number from 1 to 1000/);
    assert.match((await one("log --agent")).text, /^\[invalid_params\] "--agent" needs a value/);
    logEvents = [];
    assert.equal((await one("log")).text, "No audit events yet.");
  });

  it("settings shows every value with its origin, the files and the problems", async () => {
    const n = await one("settings");
    assert.equal(n.level, "warning", "there are problems");
    assert.match(n.text, /\n {2}placement: "pane" \(user\)\n/);
    assert.match(n.text, /\n {2}waitTimeout: 1200 \(default\)\n/);
    assert.match(n.text, /\n {2}maxDepth: 0 \(default\) \[user-only\]\n/);
    assert.match(n.text, /\nRuntime in use: tmux\n/);
    assert.match(
      n.text,
      /\n {2}user: .*\/agent\/pi-shepherd\/settings\.json \(read, 1 problem\)\n {2}project: .*\/work\/\.pi\/shepherd\.json \(not present\)\n/,
    );
    assert.match(n.text, /\nProblems:\n {2}- .*settings\.json: unknown key "colour"/);
  });

  it("the overview and settings still help when there is no runtime", async () => {
    const broken: CommandDeps = {
      ...deps,
      execute: async () => {
        throw new ShepherdError("runtime_unavailable", "neither herdr nor tmux is available.");
      },
      settings: async () => ({ loaded, runtimeError: "[runtime_unavailable] neither herdr nor tmux is available." }),
    };
    const overview = await runShepherdCommand("", broken);
    assert.deepEqual(
      overview.map((n) => n.level),
      ["error", "info"],
    );
    assert.match(overview[0]!.text, /^\[runtime_unavailable\]/);
    const settings = await runShepherdCommand("settings", broken);
    assert.match(settings[0]!.text, /\nRuntime in use: none: \[runtime_unavailable\]/);
  });

  it("herd counts the warm pool under the herd, and names what is not warm and why", async () => {
    const scout = { name: "scout", description: "looks around", source: "bundled" as const, path: join(root, "bundled", "scout.md") };
    shepherd.keepWarm({ sizes: { scout: 1, ghost: 1 }, cwd: join(root, "work"), placement: "tab", direction: "right", definitions: async () => [scout] });
    try {
      for (let i = 0; i < 400 && shepherd.warm().counts.scout?.ready !== 1; i++) await new Promise((r) => setTimeout(r, 5));
      const n = await one("herd");
      assert.match(n.text, /\nWarm pool \(not in the herd; a matching start takes one\): scout 1\.\n {2}ghost: no agent definition named "ghost"/);
      assert.deepEqual(dispatched.pop(), { action: "herd" });
    } finally {
      await shepherd.closeWarm();
    }
  });
});
