/**
 * A remote host's agent without ssh: the real bundle run by a local node over pipes, on a private
 * tmux server the test starts on the agent's socket and ends by it, with a real pi sheep on the
 * scripted model. Driven only through the proxies (RemoteRuntime, RemoteSheepFiles), as the
 * shepherd drives a remote host: prepare, a pane, the prompt and its answer told by change
 * events, the conversation, the screen, liveness, close. The secret the sheep gets travels in
 * init, on stdin: no command line of the agent or the sheep holds it.
 */
import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { isShepherdError } from "../../src/domain/errors.ts";
import { newId } from "../../src/domain/ids.ts";
import type { AgentDefinition } from "../../src/ports/types.ts";
import type { Runtime } from "../../src/ports/runtime.ts";
import type { SheepFiles } from "../../src/ports/sheep-files.ts";
import { remotePorts } from "../../src/remote/rpc/ports.ts";
import { makeAgentDir } from "../support/e2e-env.ts";
import { createFakeHerdr, type FakeHerdr } from "../support/fake-herdr.ts";
import { killSheep, pidAlive, sheepProcesses } from "../support/leftovers.ts";
import { initAgent, type LocalAgent, spawnLocalAgent, testInit } from "../support/local-agent.ts";
import { nameSafePayload, shellPayloads } from "../support/payloads.ts";
import { piCli, repoRoot } from "../support/rpc-shepherd.ts";
import { type ScriptedModel, startScriptedModel } from "../support/scripted-model.ts";

const SECRET = "sk-remote-secret-4f1c9a";
const echo: AgentDefinition = { name: "echo", description: "answers as scripted", source: "user", path: "/agents/echo.md" };

/** Resolves once check() holds, looking again on every change event and at least every 500 ms. */
async function until<T>(host: SheepFiles, agentId: string, check: () => Promise<T | undefined>, what: string, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  let wake: () => void = () => undefined;
  const off = host.subscribe(agentId, () => wake());
  try {
    for (;;) {
      const v = await check();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 500);
      });
    }
  } finally {
    off();
  }
}

describe("the agent over pipes: a real pi sheep in a private tmux, through the proxies", { timeout: 300_000 }, () => {
  let dir: string;
  let agentDir: string;
  let work: string;
  let model: ScriptedModel;
  let agent: LocalAgent;
  let socket: string;
  let runtime: Runtime;
  let host: SheepFiles;
  const agentId = newId("agent");
  let paneId: string;
  let changes = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-agent-pipes-"));
    model = await startScriptedModel();
    agentDir = await makeAgentDir(join(dir, "agent"), model.baseUrl);
    work = join(dir, "work dir");
    await mkdir(work);
    agent = await spawnLocalAgent();
    // A bare "pi" as a host's setting says it: found on the sheep's PATH, run in the launcher's own process.
    const PATH = `${join(repoRoot, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;
    const env = { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", OPENAI_API_KEY: SECRET, PATH };
    const answer = await initAgent(agent, testInit(agentDir, { piCommand: ["pi"], env }));
    assert.equal(answer.runtime, "tmux");
    socket = answer.tmuxSocket!;
    // The test's own server on the agent's private socket: the sheep's session joins it, and the test ends it.
    await execa("tmux", ["-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keeper"], { stdin: "ignore" });
    ({ runtime, files: host } = remotePorts(agent.client, { host: "test-host", runtime: answer.runtime }));
  });

  after(async () => {
    const pids = await sheepProcesses(agentDir).catch(() => [] as number[]);
    await agent?.close();
    await execa("tmux", ["-S", socket, "kill-server"], { reject: false, stdin: "ignore" });
    await killSheep(agentDir, pids);
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("prepares the sheep there and creates its marked pane on the private server, never the user's", async () => {
    const prepared = await host.prepare({ agentId, definition: echo, cwd: work, label: "remote sheep", createdAt: new Date().toISOString() });
    assert.equal(prepared.command.argv[1], join(agent.binDir, "launcher.mjs"));
    assert.deepEqual(prepared.command.reporting.slice(0, 2), ["/bin/sh", join(agent.binDir, "report-exit.sh")]);
    const spec = JSON.parse(await readFile(prepared.command.argv[2]!, "utf8")) as { argv: string[]; env: Record<string, string> };
    assert.ok(spec.argv.includes(join(agent.binDir, "sheep.mjs")), "the sheep loads the bundled extension");
    assert.deepEqual(spec.argv.slice(0, 2), [prepared.command.argv[0], realpathSync(piCli)], "pi runs in the launcher's process, on the agent's node");
    assert.equal(spec.env.OPENAI_API_KEY, SECRET, "init's env reaches the sheep through its private spec");
    assert.equal(spec.env.PI_SHEPHERD_TMUX_SOCKET, socket);
    const pane = await runtime.createPane({ agentId, placement: "tab", direction: "right", cwd: work, label: "remote sheep", command: prepared.command });
    paneId = pane.paneId;
    assert.equal(pane.runtime, "tmux", "a created pane names the remote's multiplexer");
    assert.match(pane.attachHint ?? "", new RegExp(socket.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")));
    const panes = (await execa("tmux", ["-S", socket, "list-panes", "-a", "-F", "#{pane_id} #{@pi_shepherd_agent}"], { stdin: "ignore" })).stdout;
    assert.match(panes, new RegExp(`^${paneId} ${agentId}$`, "m"));
    assert.ok((await runtime.markedPanes()).some((p) => p.agentId === agentId && p.paneId === paneId));
  });

  it("the sheep becomes ready, and liveness says alive", async () => {
    const ready = await until(host, agentId, async () => (await host.snapshot(agentId)).ready, "the sheep's status.json");
    assert.ok(ready.pid > 0);
    assert.deepEqual((await runtime.liveness([{ paneId, agentId }])).get(agentId), { state: "alive" });
    assert.equal(host.running?.(agentId), undefined, "running is not forwarded: liveness is the multiplexer's");
  });

  it("a prompt submitted through RemoteSheepFiles is answered, and change events told of it", async () => {
    const off = host.subscribe(agentId, () => changes++);
    const promptId = newId("prompt");
    await host.submit(agentId, { kind: "prompt", promptId, text: "hello from far away" });
    const result = await until(host, agentId, () => host.result(agentId, promptId), "the answer");
    off();
    assert.equal(result.status, "completed");
    assert.equal(result.text, "ECHO: hello from far away");
    assert.ok(changes > 0, "the result came with change events");
    const conversation = await host.conversation(agentId, 5);
    assert.deepEqual(
      conversation.turns?.at(-1)?.lines.map((l) => [l.kind, l.text]),
      [
        ["prompt", "hello from far away"],
        ["answer", "ECHO: hello from far away"],
      ],
    );
    // pi draws the answer a moment after it wrote the result file.
    const screen = await until(
      host,
      agentId,
      async () => ((await runtime.read(paneId, 80)).includes("ECHO: hello from far away") ? true : undefined),
      "the screen",
      30_000,
    );
    assert.equal(screen, true);
    assert.deepEqual(await host.messages(agentId), []);
    assert.deepEqual(await host.replies(agentId), new Map());
    assert.equal((await host.resumeCard(agentId))?.label, "remote sheep");
  });

  it("no command line holds the secret: not the agent's, not the sheep's", async () => {
    const pids = [agent.pid, ...(await sheepProcesses(agentDir))];
    assert.ok(pids.length >= 2);
    for (const pid of pids) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => "");
      assert.ok(!cmdline.includes(SECRET), `process ${pid}'s command line holds the secret`);
    }
  });

  it("close ends the pane, liveness says gone, cleanup keeps the session", async () => {
    const pid = (await host.snapshot(agentId)).ready!.pid;
    assert.equal(await runtime.close(paneId, agentId), true);
    assert.deepEqual((await runtime.liveness([{ paneId, agentId }])).get(agentId), { state: "gone" });
    for (let i = 0; i < 100 && pidAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(pidAlive(pid), false, "the sheep's pi ended with its pane");
    assert.equal(await host.cleanup(agentId), join(agentDir, "pi-shepherd", "sheep", agentId, "session.jsonl"));
  });

  it("the injection payloads in a label, a cwd's name and a prompt travel as data: the sheep answers them, nothing runs", async () => {
    const abs = join(dir, "pwned");
    const hostileCwd = join(dir, nameSafePayload("pwned", "\n"));
    await mkdir(hostileCwd);
    const other = newId("agent");
    const label = shellPayloads(abs).join(" ").replaceAll("\n", " ");
    const prepared = await host.prepare({ agentId: other, definition: echo, cwd: hostileCwd, label, createdAt: new Date().toISOString() });
    const pane = await runtime.createPane({ agentId: other, placement: "tab", direction: "right", cwd: hostileCwd, label, command: prepared.command });
    await until(host, other, async () => (await host.snapshot(other)).ready, "the hostile sheep's status.json");
    const promptId = newId("prompt");
    const text = shellPayloads(abs).join(" ");
    await host.submit(other, { kind: "prompt", promptId, text });
    const result = await until(host, other, () => host.result(other, promptId), "the hostile prompt's answer");
    assert.equal(result.text, `ECHO: ${text}`);
    await runtime.close(pane.paneId, other);
    await host.cleanup(other);
    for (const where of [dir, hostileCwd, agent.binDir, work]) {
      const leaked = (await readdir(where)).filter((n) => n.startsWith("pwned-"));
      assert.deepEqual(leaked, [], `a payload ran in ${where}`);
    }
  });

  it("the private tmux server killed: its sheep's pane is gone and its pi's end is seen", async () => {
    const other = newId("agent");
    const prepared = await host.prepare({ agentId: other, definition: echo, cwd: work, label: "doomed", createdAt: new Date().toISOString() });
    const pane = await runtime.createPane({ agentId: other, placement: "tab", direction: "right", cwd: work, label: "doomed", command: prepared.command });
    await until(host, other, async () => (await host.snapshot(other)).ready, "the second sheep's status.json");
    await execa("tmux", ["-S", socket, "kill-server"], { stdin: "ignore" });
    // A client that met the server while it was exiting says "server exited unexpectedly": a transient
    // error the port throws (never "gone"), as the core's liveness treats it; the next answer is gone.
    let live: unknown;
    for (let i = 0; i < 50 && live === undefined; i++) {
      live = await runtime
        .liveness([{ paneId: pane.paneId, agentId: other }])
        .then((m) => m.get(other))
        .catch((e: Error) => {
          assert.match(e.message, /server exited unexpectedly|lost server/);
          return undefined;
        });
      if (live === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(live, { state: "gone" });
    const snap = await until(host, other, async () => ((await host.snapshot(other)).piGone ? true : undefined), "the sheep's pid gone");
    assert.equal(snap, true);
    await host.cleanup(other);
  });

  it("a closed agent ends by itself (code 0), and calls to it fail [host_unreachable]", async () => {
    await agent.close();
    assert.deepEqual(await agent.exited, { code: 0, signal: null });
    await assert.rejects(host.snapshot(agentId), (e) => isShepherdError(e, "host_unreachable"));
  });
});

describe("the agent over pipes on herdr: the runtime a remote host's init chose, with a real pi sheep", { timeout: 300_000 }, () => {
  let dir: string;
  let agentDir: string;
  let model: ScriptedModel;
  let fake: FakeHerdr;
  let agent: LocalAgent;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-agent-herdr-"));
    model = await startScriptedModel();
    agentDir = await makeAgentDir(join(dir, "agent"), model.baseUrl);
    fake = await createFakeHerdr();
    // The remote user's environment: their herdr on PATH, outside any herdr pane.
    agent = await spawnLocalAgent({ env: fake.env });
  });

  after(async () => {
    const pids = await sheepProcesses(agentDir).catch(() => [] as number[]);
    await agent?.close();
    await fake?.cleanup();
    await killSheep(agentDir, pids);
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("init with runtime herdr; a sheep's pane, its answer, liveness, close", async () => {
    const answer = await initAgent(agent, testInit(agentDir, { runtime: "herdr" }));
    assert.equal(answer.runtime, "herdr");
    assert.equal(answer.tmuxSocket, undefined);
    const { runtime, files: host } = remotePorts(agent.client, { host: "test-host", runtime: answer.runtime });
    const agentId = newId("agent");
    const prepared = await host.prepare({ agentId, definition: echo, cwd: dir, label: "herdr sheep", createdAt: new Date().toISOString() });
    const pane = await runtime.createPane({ agentId, placement: "workspace", direction: "right", cwd: dir, label: "herdr sheep", command: prepared.command });
    assert.equal(pane.runtime, "herdr");
    await until(host, agentId, async () => (await host.snapshot(agentId)).ready, "the sheep's status.json");
    assert.deepEqual((await runtime.liveness([{ paneId: pane.paneId, agentId }])).get(agentId), { state: "alive" });
    const promptId = newId("prompt");
    await host.submit(agentId, { kind: "prompt", promptId, text: "hello herdr" });
    const result = await until(host, agentId, () => host.result(agentId, promptId), "the answer");
    assert.equal(result.text, "ECHO: hello herdr");
    await runtime.close(pane.paneId, agentId);
    assert.equal((await runtime.liveness([{ paneId: pane.paneId, agentId }])).get(agentId)?.state, "gone");
    await host.cleanup(agentId);
  });
});
