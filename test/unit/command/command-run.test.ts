import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runShepherdCommand, type CommandDeps } from "../../../src/command/run.ts";
import { ShepherdError } from "../../../src/domain/errors.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { DEFAULT_SETTINGS, envOverrides, loadSettings, type LoadedSettings } from "../../../src/settings.ts";
import { report, type DoctorReport } from "../../../src/doctor/types.ts";
import type { AuditEvent } from "../../../src/ports/audit.ts";
import { runCommand } from "../../../src/edge/entry.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

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
    shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock });
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

  it("no argument shows the herd and a short help: at most ten lines, the most used, and the way to the whole help", async () => {
    const notices = await runShepherdCommand("", deps);
    assert.equal(notices.length, 2);
    assert.match(notices[0]!.text, /^No live sheep\. Start one with \/shepherd start <agent>/);
    const short = notices[1]!.text.split("\n");
    assert.ok(short.length <= 10, `${short.length} lines:\n${notices[1]!.text}`);
    assert.equal(short[0], "/shepherd <subcommand>; the most used:");
    assert.equal(short.at(-1), "Every subcommand and flag: /shepherd help");
    for (const sub of ["start", "prompt", "wait", "read", "close", "panel"]) assert.match(notices[1]!.text, new RegExp(`\\n  ${sub} `));
    assert.deepEqual(dispatched.pop(), { action: "herd" });
    const help = (await one("help")).text;
    assert.match(help, /^\/shepherd <subcommand> \(no argument: the herd and the few most used\)\n/);
    for (const sub of ["herd", "sheep", "start", "status", "read", "close", "prune", "settings", "interrupt", "trust", "help"])
      assert.match(help, new RegExp(`\\n  ${sub} `));
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
    // recon, closed by the test before, is forgotten and said to be.
    assert.match((await one("prune")).text, new RegExp(`^Pruned 1: ${gone.agentId}\\.\nForgot 1 closed: recon \\(a_\\w+\\)\\.$`));
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
    assert.match(n.text, /\n {2}waitTimeout: 1200 \(default\) \[user-only\]\n/);
    assert.match(n.text, /\n {2}maxDepth: 0 \(default\) \[user-only\]\n/);
    assert.match(n.text, /\nRuntime in use: tmux\n/);
    assert.match(
      n.text,
      /\n {2}user: .*\/agent\/pi-shepherd\/settings\.json \(read, 1 problem\)\n {2}project: .*\/work\/\.pi\/shepherd\.json \(not present\)\n/,
    );
    assert.match(n.text, /\nProblems:\n {2}- .*settings\.json: unknown key "colour"/);
    assert.match(n.text, /\n {2}runtime: "auto" \(default\)\n/, "no variable: the setting rules");
  });

  it("settings says which wins when an environment variable overrides a setting", async () => {
    const over: CommandDeps = { ...deps, settings: async () => ({ loaded, runtime: "tmux", overrides: envOverrides({ PI_SHEPHERD_RUNTIME: "tmux" }) }) };
    const [n] = await runShepherdCommand("settings", over);
    assert.match(n!.text, /\n {2}runtime: "auto" \(default; PI_SHEPHERD_RUNTIME="tmux" overrides it, and wins\)\n/);
    assert.match(n!.text, /\n {2}placement: "pane" \(user\)\n/, "the other settings are not overridden");
    assert.deepEqual(envOverrides({ PI_SHEPHERD_RUNTIME: "  " }), {}, "an empty variable overrides nothing");
    assert.deepEqual(envOverrides({}), {});
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

  it("interrupt aborts a sheep's running turn through the tool's interrupt, and says so; one that runs nothing is [not_working]", async () => {
    await runShepherdCommand("start scout --label stopper", deps);
    const idle = await runShepherdCommand("interrupt stopper", deps);
    assert.equal(idle[0]!.level, "error");
    assert.match(idle[0]!.text, /^\[not_working\] /);
    await runShepherdCommand("prompt stopper a long job", deps);
    const [n] = await runShepherdCommand("interrupt stopper", deps);
    assert.equal(n!.level, "info", n!.text);
    assert.match(n!.text, /^Interrupted stopper \(a_[0-9a-z]{10}\): its turn on p_[0-9a-z]{10} is aborted/);
    await runShepherdCommand("close stopper", deps);
  });

  it("panel hands its word to this pi's panel and shows what it says; a pi without one says so", async () => {
    const asked: (string | undefined)[] = [];
    const panel = async (mode: string | undefined) => {
      asked.push(mode);
      return mode === "off"
        ? "Panel off: port 8765 on 127.0.0.1 is closed; the token of its URL is no longer valid."
        : "Panel on: http://127.0.0.1:8765/#token=t";
    };
    assert.deepEqual(await runShepherdCommand("panel", { ...deps, panel }), [{ level: "info", text: "Panel on: http://127.0.0.1:8765/#token=t" }]);
    assert.match((await runShepherdCommand("panel off", { ...deps, panel }))[0]!.text, /^Panel off: port 8765/);
    assert.deepEqual(asked, [undefined, "off"]);
    const none = await runShepherdCommand("panel url", deps);
    assert.equal(none[0]!.level, "error");
    assert.match(none[0]!.text, /^\[invalid_params\] this pi has no panel/);
  });
});

/** A person talks to a sheep without the model: /shepherd prompt, then /shepherd wait (issue 21, item 15). */
describe("/shepherd prompt and wait", () => {
  const def = { name: "echo", description: "d", source: "user" as const, path: "/agents/echo.md" };
  const setup = () => {
    const world = new MemoryWorld();
    const clock = new FakeClock();
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock });
    const dispatched: Record<string, unknown>[] = [];
    const progress: string[] = [];
    const stop = new AbortController();
    let ended = 0;
    const deps: CommandDeps = {
      execute: (command, o) => {
        dispatched.push(command);
        return runCommand(command, {
          context: async () => ({
            shepherd,
            settings: { ...DEFAULT_SETTINGS, waitTimeout: 60 },
            cwd: "/work",
            agentDir: "/agent",
            bundledDir: "/bundled",
            trust: { hasUI: false },
            ...o,
            byPerson: true,
          }),
          doctor: async () => report([]),
        });
      },
      pending: async (target) => shepherd.pending(target === undefined ? undefined : shepherd.registry.resolve(target)),
      watch: () => ({ signal: stop.signal, progress: (t) => progress.push(t), end: () => ended++ }),
      log: async () => [],
      settings: async () => {
        throw new Error("not asked");
      },
      now: () => clock.now(),
    };
    return { world, clock, shepherd, deps, dispatched, progress, stop, ended: () => ended };
  };
  const one = async (deps: CommandDeps, args: string) => {
    const notices = await runShepherdCommand(args, deps);
    assert.equal(notices.length, 1, JSON.stringify(notices));
    return notices[0]!;
  };
  /** Lets the wait begin before the sheep answers. */
  const soon = () => new Promise((r) => setTimeout(r, 10));

  it("prompt sends the tool's prompt and wait shows the answer, with its progress on the way", async () => {
    const t = setup();
    const a = await t.shepherd.start({ definition: def, cwd: "/work", label: "alpha" });
    assert.equal((await one(t.deps, "wait")).text, "No sheep has a prompt pending.");
    assert.equal((await one(t.deps, "wait alpha")).text, "alpha has no prompt pending.");

    const sent = await one(t.deps, "prompt alpha what's up?");
    assert.equal(sent.level, "info");
    assert.match(
      sent.text,
      new RegExp(`^Prompt (p_\\w+) sent to ${a.agentId}; the sheep is working on it in the background\\.\\nIts answer: /shepherd wait alpha$`),
    );
    assert.deepEqual(t.dispatched.at(-1), { action: "prompt", target: "alpha", message: "what's up?" });
    const promptId = /Prompt (p_\w+)/.exec(sent.text)![1]!;

    // Busy: the refusal offers the flags a person types, never the tool's deliverAs.
    const busy = await one(t.deps, "prompt alpha one more thing");
    assert.equal(busy.level, "error");
    assert.equal(
      busy.text,
      `[prompt_pending] sheep ${a.agentId} (alpha) is still working on ${promptId}; wait for its answer (/shepherd wait alpha), or send again with --steer (into its running turn) or --follow-up (queued behind it): /shepherd prompt alpha --follow-up <text…>`,
    );
    assert.doesNotMatch(busy.text, /deliverAs|followUp/);
    // The tool keeps its own words.
    await assert.rejects(
      t.shepherd.prompt(a.agentId, "again"),
      /; wait for it, or send with deliverAs "steer" \(into its running turn\) or "followUp" \(queued behind it\)\.$/,
    );

    const steered = await one(t.deps, "prompt alpha --steer shorter, please");
    assert.match(steered.text, new RegExp(`^Steered ${a.agentId}: s_\\w+ goes into the running turn of ${promptId}`));
    assert.deepEqual(t.dispatched.at(-1), { action: "prompt", target: "alpha", message: "shorter, please", deliverAs: "steer" });

    const waiting = one(t.deps, "wait alpha");
    await soon();
    const steerId = /(s_\w+)/.exec(steered.text)![1]!;
    t.world.answer(a.agentId, promptId, "all is well", "completed", undefined, [steerId]);
    const answered = await waiting;
    assert.equal(answered.level, "info");
    assert.equal(answered.text, `## alpha (${a.agentId}, echo) · completed · ${promptId}\nall is well\n(steered: 1 steering message reached this turn)`);
    assert.deepEqual(t.dispatched.at(-1), { action: "wait", promptIds: [promptId] }, "the tool's own wait");
    assert.equal(t.progress[0], "waiting 0/1: alpha · echo · working");
    assert.equal(t.ended(), 1, "the progress line is taken away");
  });

  it("wait with no sheep waits for every sheep's pending prompts; Escape stops it and nothing is lost", async () => {
    const t = setup();
    const a = await t.shepherd.start({ definition: def, cwd: "/work", label: "alpha" });
    const b = await t.shepherd.start({ definition: def, cwd: "/work", label: "beta" });
    const pa = await t.shepherd.prompt(a.agentId, "one");
    // The model's: its answer is owed to the conversation, and a person's wait does not take it from there.
    const pb = await t.shepherd.prompt(b.agentId, "two", { notify: true });
    assert.deepEqual(t.shepherd.pending(), [pa.promptId, pb.promptId]);

    const stopped = one(t.deps, "wait");
    await soon();
    t.stop.abort();
    assert.match((await stopped).text, /^\[aborted\] the wait was cancelled; the prompts are still pending/);

    const { watch: _, ...t2 } = t.deps;
    const waiting = one(t2, "wait");
    await soon();
    t.world.answer(a.agentId, pa.promptId, "first");
    t.world.answer(b.agentId, pb.promptId, "second", "failed", "boom");
    const both = await waiting;
    assert.equal(both.level, "warning", "not every prompt completed");
    assert.match(both.text, new RegExp(`^1/2 completed\\.\\n\\n## alpha \\(${a.agentId}, echo\\) · completed · ${pa.promptId}\\nfirst\\n\\n## beta`));
    assert.equal(t.shepherd.registry.prompts.get(pb.promptId)!.delivered, undefined, "the notify result still goes to the model");
  });

  it("a wait that times out says how a person waits again", async () => {
    const t = setup();
    const a = await t.shepherd.start({ definition: def, cwd: "/work", label: "alpha" });
    const p = await t.shepherd.prompt(a.agentId, "slow");
    const r = await runShepherdCommand("wait alpha", {
      ...t.deps,
      execute: (command, o) => t.deps.execute(command.action === "wait" ? { ...command, timeout: 0 } : command, o),
    });
    assert.equal(r[0]!.text, `## alpha (${a.agentId}, echo) · timeout · ${p.promptId}\nStill working; nothing was stopped. Wait again: /shepherd wait alpha`);
  });
});

/** Lines a person read wrong (issue 21, item 16). */
describe("/shepherd lines that now say what is so", () => {
  const def = { name: "echo", description: "d", source: "user" as const, path: "/agents/echo.md" };

  it("closing twice says it was already closed, by label as by id", async () => {
    const world = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock: new FakeClock() });
    const a = await shepherd.start({ definition: def, cwd: "/work", label: "alpha" });
    const deps: CommandDeps = {
      execute: (command) =>
        runCommand(command, {
          context: async () => ({ shepherd, settings: DEFAULT_SETTINGS, cwd: "/work", agentDir: "/agent", bundledDir: "/b", trust: { hasUI: false } }),
          doctor: async () => report([]),
        }),
      log: async () => [],
      settings: async () => {
        throw new Error("not asked");
      },
      now: () => 0,
    };
    assert.match((await runShepherdCommand("close alpha", deps))[0]!.text, /^Closed alpha/);
    assert.equal((await runShepherdCommand("close alpha", deps))[0]!.text, `alpha (${a.agentId}) was already closed.`);
    assert.equal((await runShepherdCommand(`close ${a.agentId}`, deps))[0]!.text, `alpha (${a.agentId}) was already closed.`);
    assert.match((await runShepherdCommand("close nobody", deps))[0]!.text, /^\[unknown_agent\] no live sheep with id or label "nobody"/);
  });

  it("settings names a file that came after they were read, and says they are read at start", async () => {
    const root = await mkdtemp(join(tmpdir(), "pi-shepherd-settings-late-"));
    try {
      const loaded = await loadSettings(join(root, "agent"), join(root, "work"));
      const userFile = join(root, "agent", "pi-shepherd", "settings.json");
      const deps: CommandDeps = {
        execute: async () => {
          throw new Error("not asked");
        },
        log: async () => [],
        settings: async () => ({ loaded, runtime: "tmux", presentNow: [userFile] }),
        now: () => 0,
      };
      const text = (await runShepherdCommand("settings", deps))[0]!.text;
      assert.match(text, /\n {2}user: .*\/agent\/pi-shepherd\/settings\.json \(not read: it came after the settings were read; \/reload reads it\)\n/);
      assert.match(text, /\n {2}project: .*\/work\/\.pi\/shepherd\.json \(not present\)\n/);
      assert.match(text, /\nSettings are read when pi starts; after editing a file, \/reload\.$/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
