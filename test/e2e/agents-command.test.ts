/**
 * Agent definitions, trust, the operational actions and /shepherd, with a real pi shepherd over
 * RPC and real pi sheep in a private tmux server, on the scripted model.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { recordTrustDecision } from "../../src/project-trust.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { type RpcShepherd, repoRoot, type ToolOutcome } from "../support/rpc-shepherd.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

const PROBE_BODY = "You are the probe. PROBE-BODY-MARKER-7f3a";
const PROJ_BODY = "You are the project's own agent. PROJ-BODY-MARKER-91c2";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("agent definitions, trust, operational actions and /shepherd with real pi", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let agentDir: string;
  let work: string;
  let userSettings: string;
  let shepherd: RpcShepherd;
  const sheepPids: number[] = [];

  const ok = (args: unknown): Promise<ToolOutcome> => shepherd.ok(args);
  const rememberPid = async (agentId: string) => {
    const status = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "sheep", agentId, "status.json"), "utf8")) as { pid: number };
    sheepPids.push(status.pid);
  };
  const start = async (agent: string, label: string) => {
    const a = (await ok({ action: "start", agent, label })).details.agent as { agentId: string; paneId: string };
    await rememberPid(a.agentId);
    return a;
  };
  /** Prompts a sheep, waits for its answer, and returns the model request it made. */
  const ask = async (agentId: string, tag: string, reply = `${tag} answered`) => {
    const p = (await ok({ action: "prompt", agentId, message: directive({ reply, tag }) })).details.prompt as { promptId: string };
    const [r] = (await ok({ action: "wait", promptId: p.promptId, timeout: 60 })).details.results as { status: string; text: string }[];
    assert.equal(r!.status, "completed");
    assert.equal(r!.text, reply);
    const req = model.log.find((l) => l.tag === tag);
    assert.ok(req, `the sheep's request ${tag} reached the model`);
    return req;
  };
  const panes = async () => (await tmux.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n");
  const herdLabels = async () => ((await ok({ action: "herd" })).details.agents as { label: string }[]).map((a) => a.label);
  /** /shepherd <args> that must produce exactly one notification of the given level. */
  const slash = async (args: string, level = "info") => {
    const notices = await shepherd.slash(`/shepherd ${args}`.trimEnd());
    assert.equal(notices.length, 1, `one notification for /shepherd ${args}: ${JSON.stringify(notices)}`);
    assert.equal(notices[0]!.level, level, notices[0]!.text);
    return notices[0]!.text;
  };
  const startedId = async (text: string) => {
    const m = /as (a_\w{10}) in tmux pane (%\d+)/.exec(text);
    assert.ok(m, text);
    await rememberPid(m[1]!);
    return { agentId: m[1]!, paneId: m[2]! };
  };
  const settingsProblemNotices = () =>
    shepherd.events.filter((e) => e.type === "extension_ui_request" && e.method === "notify" && String(e.message).startsWith("pi-shepherd settings problems"));

  before(async () => {
    world = await e2eWorld("agents-e2e", {
      agent: {
        // The user's own extensions include pi-shepherd, so sheep load it too: the depth rule must keep it quiet there.
        piSettings: { extensions: [join(repoRoot, "extensions", "shepherd.ts")] },
        agents: {
          "probe.md": `---\nname: probe\ndescription: a probe with two tools\ntools: read, grep\n---\n${PROBE_BODY}\n`,
          "plain.md": "---\nname: plain\ndescription: pi's default tools\n---\nYou are plain.\n",
          "broken.md": "---\nname: broken\n---\nno description\n",
        },
        shepherdSettings: { placement: "tab", colour: "blue" },
      },
      work: true,
    });
    ({ tmux, model, agentDir, cwd: work } = world);
    userSettings = join(agentDir, "pi-shepherd", "settings.json");
    await mkdir(join(work, "sub"), { recursive: true });
    await mkdir(join(work, ".pi", "agents"), { recursive: true });
    await writeFile(join(work, ".pi", "agents", "proj.md"), `---\nname: proj\ndescription: the repository's agent\ntools:\n  - read\n---\n${PROJ_BODY}\n`);
    await writeFile(join(work, ".pi", "shepherd.json"), JSON.stringify({ allowProjectAgentsWithoutUI: true }));
    // The person trusted the project, as /shepherd trust records it (hostile-agents covers the command itself).
    await recordTrustDecision(agentDir, work, "trusted");
    world.defer(() => {
      for (const pid of sheepPids) if (alive(pid)) process.kill(pid, "SIGKILL");
    });
    shepherd = world.shepherd();
  });

  after(() => world?.cleanup());

  it("reports settings problems to the user at startup", async () => {
    const e = await shepherd.until(
      (x) => x.type === "extension_ui_request" && x.method === "notify" && String(x.message).startsWith("pi-shepherd settings problems"),
    );
    assert.equal(e.notifyType, "warning");
    assert.match(String(e.message), /settings\.json: unknown key "colour"/);
    assert.match(String(e.message), /shepherd\.json: "allowProjectAgentsWithoutUI" can only be set in the user's settings/);
  });

  it("sheep lists definitions of every scope with source, path and tools, and the skipped file with its reason", async () => {
    const r = await ok({ action: "sheep", agentScope: "both" });
    const agents = new Map((r.details.agents as { name: string; source: string; path: string; tools?: string[] }[]).map((a) => [a.name, a]));
    assert.deepEqual(agents.get("probe"), {
      name: "probe",
      description: "a probe with two tools",
      source: "user",
      path: join(agentDir, "agents", "probe.md"),
      tools: ["read", "grep"],
    });
    assert.equal(agents.get("proj")?.source, "project");
    assert.equal(agents.get("proj")?.path, join(work, ".pi", "agents", "proj.md"));
    for (const b of ["scout", "planner", "worker", "reviewer"]) assert.equal(agents.get(b)?.source, "bundled", b);
    assert.deepEqual(r.details.skipped, [{ path: join(agentDir, "agents", "broken.md"), reason: 'missing required field "description"' }]);
    assert.match(r.text, /broken\.md: missing required field "description"/);
    const userOnly = (await ok({ action: "sheep" })).details.agents as { name: string }[];
    assert.ok(!userOnly.some((a) => a.name === "proj"), "project agents only with scope project or both");
  });

  let probe: { agentId: string; paneId: string };

  it("a sheep started from a definition gets exactly its tool list and its body in the system prompt", async () => {
    probe = await start("probe", "probe-1");
    const req = await ask(probe.agentId, "PROBE", "probe says hi");
    // Its own list, and the line to its shepherd that every sheep keeps.
    assert.deepEqual([...req.toolNames].sort(), ["grep", "read", "shepherd_message"]);
    assert.ok(req.system.includes(PROBE_BODY), "the body is appended to the system prompt");
    const own = model.log.find((l) => l.tag?.startsWith("call-"));
    assert.ok(own?.toolNames.includes("shepherd"), "the shepherd itself has the tool");
  });

  it("sheep load the user's extensions but cannot start sheep unless maxDepth allows it", async () => {
    const plain = await start("plain", "plain-0");
    const req0 = await ask(plain.agentId, "PLAIN0");
    for (const t of ["read", "bash", "edit", "write"]) assert.ok(req0.toolNames.includes(t), t);
    assert.ok(!req0.toolNames.includes("shepherd"), `depth 1 > maxDepth 0: no shepherd tool (${req0.toolNames.join(",")})`);
    await writeFile(userSettings, JSON.stringify({ placement: "tab", colour: "blue", maxDepth: 1 }), { mode: 0o600 });
    try {
      const deep = await start("plain", "plain-1");
      const req1 = await ask(deep.agentId, "PLAIN1");
      assert.ok(req1.toolNames.includes("shepherd"), "with maxDepth 1 the same sheep gets it: the extension was loaded all along");
      await ok({ action: "close", agentId: deep.agentId });
    } finally {
      await writeFile(userSettings, JSON.stringify({ placement: "tab", colour: "blue" }), { mode: 0o600 });
    }
    await ok({ action: "close", agentId: plain.agentId });
  });

  it("herd lists live sheep with state, runtime and age; read gives a sheep's conversation by label, or its screen", async () => {
    const r = await ok({ action: "herd" });
    const agents = r.details.agents as { agentId: string; label: string; state: string; runtime: string; paneAlive: boolean }[];
    assert.deepEqual(
      agents.map((a) => [a.agentId, a.label, a.state, a.runtime, a.paneAlive]),
      [[probe.agentId, "probe-1", "idle", "tmux", true]],
    );
    // the same words /shepherd herd shows a person (one formatter family)
    assert.match(r.text, /^Herd \(1\):\n {2}probe-1 \(a_\w{10}, probe\): idle · tmux · \d+s old$/);

    // A second prompt, sent by the sheep's label: every action that takes a sheep takes its label.
    const second = directive({ reply: "second answer\nin two lines", tag: "PROBE2" });
    const p = (await ok({ action: "prompt", agentId: "probe-1", message: second })).details.prompt as { promptId: string; agentId: string };
    assert.equal(p.agentId, probe.agentId);
    await ok({ action: "wait", promptId: p.promptId, timeout: 60 });

    const session = await ok({ action: "read", target: "probe-1" });
    assert.equal(session.details.agentId, probe.agentId);
    assert.equal(session.details.source, "session");
    const turns = session.details.turns as { lines: { kind: string; text: string }[] }[];
    assert.deepEqual(
      turns.map((t) => t.lines.map((l) => [l.kind, l.text])),
      [
        [
          ["prompt", directive({ reply: "probe says hi", tag: "PROBE" })],
          ["answer", "probe says hi"],
        ],
        [
          ["prompt", second],
          ["answer", "second answer\nin two lines"],
        ],
      ],
      "both turns, from the session file, prompts and answers",
    );
    assert.ok(
      session.text.startsWith(
        `The last 2 turns of probe-1 (${probe.agentId}, probe), from ${join(agentDir, "pi-shepherd", "sheep", probe.agentId, "session.jsonl")}:`,
      ),
    );
    assert.ok(session.text.endsWith(`> ${second}\nsecond answer\nin two lines`), session.text);
    const one = await ok({ action: "read", target: "probe-1", turns: 1 });
    assert.equal((one.details.turns as unknown[]).length, 1);
    assert.match(one.text, /; earlier ones are not shown:/);

    let text = "";
    for (let i = 0; i < 40 && !text.includes("in two lines"); i++) {
      if (i) await sleep(250);
      const read = await ok({ action: "read", target: "probe-1", source: "screen", lines: 200 });
      text = String(read.details.text);
    }
    assert.ok(text.includes("probe says hi") && text.includes("in two lines"), `the pane shows the sheep's answers:\n${text}`);
    assert.doesNotMatch(text, /─{20}/, "pi's editor frame is not in it");
    assert.doesNotMatch(text, /scripted-model\s*$/, "nor its footer");
  });

  it("prune drops a sheep whose pane was killed by hand, and only that one", async () => {
    const victim = await start("probe", "victim");
    await tmux.tmux(["kill-pane", "-t", victim.paneId]);
    const r = await ok({ action: "prune" });
    assert.deepEqual(r.details.removed, [victim.agentId]);
    assert.deepEqual(await herdLabels(), ["probe-1"]);
    assert.deepEqual((await ok({ action: "prune" })).details.removed, []);
  });

  it("/shepherd with no argument shows the herd and a short help", async () => {
    const notices = await shepherd.slash("/shepherd");
    assert.deepEqual(
      notices.map((n) => n.level),
      ["info", "info"],
    );
    assert.match(notices[0]!.text, new RegExp(`^Herd \\(1\\):\\n  probe-1 \\(${probe.agentId}, probe\\): idle · tmux · \\d+[smh]`));
    assert.match(notices[1]!.text, /^\/shepherd <subcommand>; the most used:\n[\s\S]*\nEvery subcommand and flag: \/shepherd help$/);
    assert.match(await slash("help"), /\n {2}start <agent> \[--label L\] .* — start a sheep from an agent definition/);
  });

  it("/shepherd sheep (alias agents) lists definitions and skipped files", async () => {
    const user = await slash("sheep", "warning");
    assert.match(user, /^Agent definitions \(scope user\):/);
    assert.match(user, /\n- probe \(user\): a probe with two tools \[tools: read, grep\]/);
    assert.match(user, /\n- scout \(bundled\): /);
    assert.match(user, /broken\.md: missing required field "description"/);
    assert.ok(!user.includes("proj (project)"));
    assert.match(await slash("agents both", "warning"), /\n- proj \(project\): the repository's agent \[tools: read\]/);
  });

  it("/shepherd start, herd, status, read and close drive a sheep by its label", async () => {
    const text = await slash('start probe --label "cmd sheep" --cwd sub');
    assert.match(
      text,
      new RegExp(
        `^Started "cmd sheep" \\(probe\\) as a_\\w{10} in tmux pane %\\d+, cwd ${join(work, "sub").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}; it is idle\\.`,
      ),
    );
    const cmd = await startedId(text);
    assert.ok((await panes()).includes(cmd.paneId));
    assert.deepEqual((await herdLabels()).sort(), ["cmd sheep", "probe-1"], "the tool sees the sheep the command started: one app");
    assert.match(await slash("herd"), new RegExp(`\\n  cmd sheep \\(${cmd.agentId}, probe\\): idle · tmux · `));
    assert.match(await slash('status "cmd sheep"'), new RegExp(`^cmd sheep \\(${cmd.agentId}, probe\\): idle · tmux · \\d+s old`));
    assert.match(await slash(`status ${cmd.agentId}`), new RegExp(`^cmd sheep \\(${cmd.agentId}, probe\\): idle`));
    const sessionPath = join(agentDir, "pi-shepherd", "sheep", cmd.agentId, "session.jsonl");
    assert.equal(await slash('read "cmd sheep"'), `cmd sheep (${cmd.agentId}, probe) has no conversation yet: its session file ${sessionPath} does not exist.`);
    const screen = await slash('read "cmd sheep" --source screen --lines 200');
    assert.ok(screen.startsWith(`Screen of cmd sheep (${cmd.agentId}, probe):\n`), screen);
    assert.ok(screen.split("\n").length > 1 && !screen.endsWith("(the pane shows no text)"), "the pane's text is shown");
    assert.equal(await slash('close "cmd sheep"'), `Closed cmd sheep (${cmd.agentId}); it wrote no session file.`);
    assert.ok(!(await panes()).includes(cmd.paneId), "its pane is gone");
    assert.match(await slash(`status ${cmd.agentId}`), /: closed\.$/);
    assert.deepEqual(await herdLabels(), ["probe-1"]);
  });

  it("/shepherd prune forgets a sheep whose pane was killed by hand", async () => {
    const doomed = await startedId(await slash("start probe --label doomed"));
    // Closed sheep of the cases before are forgotten, and said to be; the live one stays.
    assert.match(await slash("prune"), /^(Nothing to prune: every recorded pane is alive\.|Forgot \d+ closed: .*\.)$/);
    assert.match(await slash("herd"), /doomed/);
    await tmux.tmux(["kill-pane", "-t", doomed.paneId]);
    assert.equal(await slash("prune"), `Pruned 1: ${doomed.agentId}.`);
    assert.doesNotMatch(await slash("herd"), /doomed/);
  });

  it("/shepherd start of a project agent asks the user, naming the file; no is refused, yes runs it", async () => {
    assert.match(await slash("start proj", "error"), /^\[unknown_definition\] no agent definition named "proj" in scope "user"/);
    const asked: Record<string, unknown>[] = [];
    let answer = false;
    const stop = shepherd.answerDialogs((request) => {
      asked.push(request);
      return { confirmed: answer };
    });
    try {
      assert.match(
        await slash("start proj --scope project", "error"),
        /^\[project_agent_refused\] project agent "proj" \(.*\/work\/\.pi\/agents\/proj\.md\) was not approved/,
      );
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.method, "confirm");
      assert.ok(String(asked[0]!.message).includes(join(work, ".pi", "agents", "proj.md")), "the dialog names the file");
      assert.deepEqual(await herdLabels(), ["probe-1"], "a refused agent starts nothing");
      answer = true;
      const started = await startedId(await slash("start proj --scope project --label proj-1"));
      assert.equal(asked.length, 2);
      const req = await ask(started.agentId, "PROJ");
      assert.deepEqual(req.toolNames, ["read", "shepherd_message"]);
      assert.ok(req.system.includes(PROJ_BODY));
      assert.equal(
        await slash("close proj-1"),
        `Closed proj-1 (${started.agentId}); its session file is kept at ${join(agentDir, "pi-shepherd", "sheep", started.agentId, "session.jsonl")}.`,
      );
    } finally {
      stop();
    }
  });

  it("/shepherd settings shows the settings in effect, their files and problems; they were reported once", async () => {
    const text = await slash("settings", "warning");
    // The world's shepherd runs with PI_SHEPHERD_RUNTIME=tmux: its line says that wins.
    assert.match(
      text,
      /^Settings in effect:\n {2}runtime: "auto" \(default; PI_SHEPHERD_RUNTIME="tmux" overrides it, and wins\)\n {2}placement: "tab" \(user\)\n/,
    );
    assert.match(text, /\n {2}maxDepth: 0 \(default\) \[user-only\]\n/);
    assert.match(text, /\nRuntime in use: tmux\n/);
    assert.ok(text.includes(`\n  user: ${userSettings} (read, 1 problem)\n  project: ${join(work, ".pi", "shepherd.json")} (read, 1 problem)\n`), text);
    assert.match(text, /\nProblems:\n {2}- .*unknown key "colour".*\n {2}- .*"allowProjectAgentsWithoutUI" can only be set in the user's settings/);
    assert.equal(settingsProblemNotices().length, 1, "the startup report is not repeated");
  });

  it("/shepherd failures are error notifications that start with their [code]", async () => {
    assert.match(await slash("status nobody", "error"), /^\[unknown_agent\] no live sheep with id or label "nobody"/);
    assert.match(await slash("start", "error"), /^\[invalid_params\] "start" needs an agent name/);
    assert.match(await slash("start probe --placement sideways", "error"), /^\[invalid_params\] "placement" must be one of/);
    assert.match(await slash("read probe-1 --lines 0", "error"), /^\[invalid_params\] "lines" must be a number from 1 to 10000/);
    assert.match(await slash("graze", "error"), /^\[invalid_params\] unknown subcommand "graze"/);
  });

  it("when the shepherd quits, no sheep pi is left", async () => {
    await shepherd.stop();
    for (let i = 0; i < 50 && sheepPids.some(alive); i++) await sleep(100);
    assert.deepEqual(sheepPids.filter(alive), []);
    assert.deepEqual(
      (await panes()).filter((p) => p !== tmux.userPane),
      [],
      "every sheep pane was closed",
    );
  });
});
