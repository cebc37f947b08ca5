/**
 * The agent protocol without ssh: the real agent bundle run by a local node over pipes, driven
 * by RpcClient and the proxies. Hostile lines are refused and the agent goes on; errors arrive
 * as [code] ShepherdErrors; a stream that closes fails what is pending with [host_unreachable].
 */
import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { homedir, tmpdir, userInfo } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, test } from "node:test";
import { execa } from "execa";
import { isShepherdError } from "../../../src/domain/errors.ts";
import { remoteBundle } from "../../../src/remote/bundle.ts";
import { MAX_LINE_BYTES, PROTOCOL_VERSION, type RemoteEvent, type SysInfo } from "../../../src/remote/rpc/call.ts";
import { CallLost } from "../../../src/remote/rpc/lost-call.ts";
import { RpcClient } from "../../../src/remote/rpc/client.ts";
import { LineSplitter } from "../../../src/remote/rpc/lines.ts";
import { inProcessPi, privateTmuxSocket } from "../../../src/remote/server/setup.ts";
import { remotePorts } from "../../../src/remote/rpc/ports.ts";
import { writeAgentDir } from "../../support/agent-dir.ts";
import { git, makeRepo } from "../../support/git-repo.ts";
import { initAgent, type LocalAgent, spawnLocalAgent, testInit } from "../../support/local-agent.ts";
import { piCli, repoRoot } from "../../support/rpc-shepherd.ts";

let agent: LocalAgent;
let dir: string;
let agentDir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-shepherd-remote-rpc-"));
  agentDir = await writeAgentDir("http://127.0.0.1:9", join(dir, "agent"));
  agent = await spawnLocalAgent();
});

after(async () => {
  await agent.close();
  await rm(dir, { recursive: true, force: true });
});

/** Lines the agent writes, seen raw: a second reader on its stdout. */
function rawLines(): { lines: string[]; stop(): void } {
  const lines: string[] = [];
  const split = new LineSplitter();
  const stdout = (agent.client as unknown as { o: { input: NodeJS.ReadableStream } }).o.input;
  const on = (c: Buffer) => {
    for (const e of split.push(c)) if ("line" in e) lines.push(e.line);
  };
  stdout.on("data", on);
  return { lines, stop: () => stdout.off("data", on) };
}

test("the agent says hello first: protocol, the bundle's hash (its directory), its pid and node", async () => {
  const bundle = await remoteBundle();
  assert.equal(agent.hello.protocol, PROTOCOL_VERSION);
  assert.equal(agent.hello.bundle, bundle.hash);
  assert.equal(agent.hello.pid, agent.pid);
  assert.match(agent.hello.node, /^v\d+\./);
});

test("the bundle: five files, each with its sha256, named by a hash of them all; built once per process", async () => {
  const a = await remoteBundle();
  assert.deepEqual(a.files.map((f) => f.name).sort(), ["agent.mjs", "egress-forwarder.mjs", "launcher.mjs", "report-exit.sh", "sheep.mjs"]);
  assert.match(a.hash, /^[0-9a-f]{16}$/);
  assert.equal(await remoteBundle(), a);
  const sheep = a.files.find((f) => f.name === "sheep.mjs")!.content.toString("utf8");
  // What pi provides to extensions stays pi's: imported, never bundled.
  assert.match(sheep, /from "@earendil-works\/pi-coding-agent"|from "@sinclair\/typebox"/);
  assert.doesNotMatch(sheep, /TypeBox|KindGuard/);
});

test("the same sources make the same bundle wherever the shepherd runs: its hash does not depend on the cwd", async () => {
  // esbuild keeps the cwd its service started in: another cwd needs another process.
  const script = `import { remoteBundle } from ${JSON.stringify(join(repoRoot, "src", "remote", "bundle.ts"))}; console.log((await remoteBundle()).hash);`;
  const loader = join(repoRoot, "node_modules", "tsx", "dist", "loader.mjs");
  const r = await execa(process.execPath, ["--import", loader, "--input-type=module", "-e", script], { cwd: tmpdir(), stdin: "ignore" });
  assert.equal(String(r.stdout).trim(), (await remoteBundle()).hash);
});

test("a call before init is refused with [protocol_error]; sys.dir works before it", async () => {
  await assert.rejects(agent.client.call("files.snapshot", ["a_0123456789"]), (e) => isShepherdError(e, "protocol_error") && /before init/.test(e.message));
  assert.equal(await agent.client.call("sys.dir", [null]), homedir());
  assert.equal(await agent.client.call("sys.dir", [dir]), dir);
  assert.equal(await agent.client.call("sys.dir", ["~"]), homedir());
  assert.equal(await agent.client.call("sys.dir", [`~/${relative(homedir(), dir)}`]), resolve(homedir(), relative(homedir(), dir)));
  await assert.rejects(agent.client.call("sys.dir", [join(dir, "nope")]), (e) => isShepherdError(e, "cwd_invalid") && e.message.startsWith("[cwd_invalid] "));
});

test("init makes the state dir private and answers the runtime, the state dir, the private tmux socket and the home", async () => {
  await assert.rejects(initAgent(agent, { ...testInit(agentDir), piCommand: [] }), (e) => isShepherdError(e, "invalid_params"));
  const answer = await initAgent(agent, testInit(agentDir));
  assert.equal(answer.runtime, "tmux");
  assert.equal(answer.stateDir, join(agentDir, "pi-shepherd"));
  assert.equal(answer.tmuxSocket, join(agentDir, "pi-shepherd", "tmux", "default"));
  assert.equal(answer.home, homedir());
  assert.equal((await stat(answer.stateDir)).mode & 0o777, 0o700);
  await assert.rejects(initAgent(agent, testInit(agentDir)), (e) => isShepherdError(e, "protocol_error") && /twice/.test(e.message));
  const info = (await agent.client.call("sys.info", [])) as SysInfo;
  assert.equal(info.node, agent.hello.node);
  assert.equal(info.stateDirMode, 0o700);
  assert.match(info.tmux ?? "", /^tmux /);
  assert.match(info.pi ?? "", /\d+\.\d+/);
});

test("git through RemoteWorkspace on a real repository: baseline, diff, isolate, inspect, land, remove; git's refusals keep their codes", async () => {
  const ws = remotePorts(agent.client, { host: "test-host", runtime: "tmux" }).workspace;
  const repo = await makeRepo(join(dir, "repo with space"), { "a.txt": "one\n" });
  const baseline = await ws.baseline(repo);
  assert.ok(baseline);
  assert.equal(baseline.root, repo);
  assert.equal(await ws.baseline(dir), undefined, "outside a repository there is no baseline");
  await writeFile(join(repo, "a.txt"), "one\ntwo\n");
  const patchPath = join(dir, "evidence.patch");
  const d = await ws.diff(baseline, { patchPath, inlineLines: 50 });
  assert.deepEqual(
    d.files.map((f) => [f.path, f.status, f.insertions]),
    [["a.txt", "modified", 1]],
  );
  assert.match(await readFile(patchPath, "utf8"), /\+two/);
  await git(repo, "commit", "-qam", "two");
  const { worktree, cwd } = await ws.isolate({ cwd: repo, agentId: "a_0123456789", label: "remote one" });
  assert.equal(cwd, worktree.path);
  assert.ok(worktree.path.startsWith(join(agentDir, "pi-shepherd", "worktrees")));
  assert.match(worktree.branch, /^shepherd\/remote-one-/);
  await writeFile(join(worktree.path, "b.txt"), "from the sheep\n");
  assert.deepEqual(await ws.inspect(worktree), { exists: true, uncommitted: ["b.txt"], unlanded: false });
  assert.deepEqual(await ws.conflicts(worktree), []);
  assert.deepEqual(await ws.branchState!(worktree), {
    exists: true,
    branch: worktree.branch,
    into: "main",
    ahead: 0,
    behind: 0,
    conflicts: [],
    uncommitted: 1,
    worked: true,
    landed: false,
  });
  // A change of the user's to a file the landing writes stops it.
  await writeFile(join(repo, "b.txt"), "in the way\n");
  await git(repo, "add", "b.txt");
  await assert.rejects(ws.land(worktree, { squash: true, label: "remote one" }), (e) => isShepherdError(e, "land_refused"));
  await git(repo, "rm", "-q", "--cached", "b.txt");
  await rm(join(repo, "b.txt"));
  const landed = await ws.land(worktree, { squash: true, label: "remote one" });
  assert.equal(landed.landed, true);
  assert.equal(landed.into, "main");
  assert.equal(await readFile(join(repo, "b.txt"), "utf8"), "from the sheep\n");
  await writeFile(join(repo, "c.txt"), "the user's\n");
  await git(repo, "add", "c.txt");
  await git(repo, "commit", "-qm", "c");
  const synced = await ws.sync(worktree, { label: "remote one" });
  assert.equal(synced.synced, true);
  assert.deepEqual(synced.conflicts, []);
  assert.equal(await readFile(join(worktree.path, "c.txt"), "utf8"), "the user's\n");
  await ws.remove(worktree);
  assert.equal((await ws.inspect(worktree)).exists, false);
  await assert.rejects(ws.isolate({ cwd: dir, agentId: "a_0123456789", label: "x" }), (e) => isShepherdError(e, "not_a_repository"));
});

test("a sheep's files through RemoteSheepFiles without a pane: prepare (0700/0600), its card relabelled, an evidence path, discard", async () => {
  const host = remotePorts(agent.client, { host: "test-host", runtime: "tmux" }).files;
  const agentId = "a_remote0001";
  const prepared = await host.prepare({
    agentId,
    definition: { name: "echo", description: "", source: "user", path: "/echo.md", systemPrompt: "Be brief." },
    cwd: dir,
    label: "warm one",
    createdAt: new Date().toISOString(),
  });
  const sheep = join(agentDir, "pi-shepherd", "sheep", agentId);
  assert.equal(prepared.sessionPath, join(sheep, "session.jsonl"));
  assert.equal((await stat(sheep)).mode & 0o777, 0o700);
  assert.equal((await stat(join(sheep, "spec.json"))).mode & 0o777, 0o600);
  await host.relabel?.(agentId, "taken one");
  const card = join(agentDir, "pi-shepherd", "cards", `${agentId}.json`);
  assert.equal((JSON.parse(await readFile(card, "utf8")) as { label: string }).label, "taken one");
  // A card counts once there is a conversation to resume: this sheep never wrote one.
  assert.equal(await host.resumeCard(agentId), undefined);
  assert.ok(!(await host.resumeCards()).some((c) => c.agentId === agentId));
  assert.deepEqual(await host.snapshot(agentId), {});
  assert.equal(await host.result(agentId, "p_0123456789"), undefined);
  assert.equal(await host.evidencePath(agentId, "p_0123456789"), join(sheep, "evidence", "p_0123456789.patch"));
  assert.deepEqual(await host.conversation(agentId, 3), { sessionPath: prepared.sessionPath, earlier: false });
  // A spec no launcher read: listed by the agent once older than asked (issue 31, item 7).
  assert.deepEqual(await host.staleSpecs!(60_000), []);
  const then = Date.now() / 1000 - 120;
  await utimes(join(sheep, "spec.json"), then, then);
  assert.deepEqual(await host.staleSpecs!(60_000), [{ agentId }]);
  await host.discard(agentId);
  assert.deepEqual(await host.staleSpecs!(60_000), []);
  await assert.rejects(stat(sheep), { code: "ENOENT" });
  await assert.rejects(stat(card), { code: "ENOENT" });
});

test("an adapter's ShepherdError arrives with its code and words; a bad agent id is refused before any path is made of it", async () => {
  await assert.rejects(
    agent.client.call("files.prepare", [
      {
        agentId: "a_0123456789",
        definition: { name: "x", description: "", source: "user", path: "/x", model: "-rf" },
        cwd: dir,
        label: "l",
        createdAt: new Date().toISOString(),
      },
    ]),
    (e) => isShepherdError(e, "invalid_params") && /model "-rf"/.test(e.message),
  );
  await assert.rejects(agent.client.call("files.snapshot", ["../../etc"]), (e) => isShepherdError(e, "invalid_params") && /no agent id/.test(e.message));
  await assert.rejects(agent.client.call("files.result", ["a_0123456789"]), (e) => isShepherdError(e, "invalid_params") && /parameter 2/.test(e.message));
});

test("unknown methods, non-JSON, lines without ids and a line over 64 MiB are refused, and the agent goes on answering", async () => {
  const raw = rawLines();
  try {
    await assert.rejects(
      agent.client.call("rm.everything", []),
      (e) => isShepherdError(e, "protocol_error") && /unknown method "rm.everything"/.test(e.message),
    );
    await assert.rejects(agent.client.call("constructor", []), (e) => isShepherdError(e, "protocol_error"));
    await assert.rejects(agent.client.call("__proto__", []), (e) => isShepherdError(e, "protocol_error"));
    const stdin = (agent.client as unknown as { o: { output: NodeJS.WritableStream } }).o.output;
    stdin.write("this is not json\n");
    stdin.write('{"m":"sys.dir","p":[null]}\n');
    stdin.write('{"id":77,"m":"sys.dir","p":"not a list"}\n');
    stdin.write("[1,2,3]\n");
    // Over the limit, in pieces the agent cannot hold: it is skipped to its newline, not buffered.
    const piece = Buffer.alloc(8 * 1024 * 1024, 0x61);
    for (let i = 0; i < MAX_LINE_BYTES / piece.length + 1; i++) stdin.write(piece);
    stdin.write('{"after":"the long line"}\n');
    assert.equal(await agent.client.call("sys.dir", [null]), homedir());
    const errors = raw.lines.map((l) => JSON.parse(l) as { id?: number | null; err?: { code: string; message: string } }).filter((l) => l.err);
    const nulls = errors.filter((l) => l.id === null).map((l) => l.err!.message);
    assert.ok(nulls.some((m) => /not JSON/.test(m)));
    assert.ok(nulls.some((m) => /whole-number id/.test(m)));
    assert.ok(nulls.some((m) => /over 67108864 bytes/.test(m)));
    assert.ok(errors.some((l) => l.id === 77 && /must be a list/.test(l.err!.message)));
    assert.doesNotThrow(() => process.kill(agent.pid, 0), "the agent still runs");
  } finally {
    raw.stop();
  }
});

test("an agent killed mid-call: the pending call fails [host_unreachable], and so does the next", async () => {
  const doomed = await spawnLocalAgent({ host: "doomed" });
  try {
    // sys.info asks pi for its version: slow enough to be pending when the agent dies.
    const pending = doomed.client.call("sys.info", [{ piCommand: testInit(agentDir).piCommand }]);
    process.kill(doomed.pid, "SIGKILL");
    await assert.rejects(pending, (e) => isShepherdError(e, "host_unreachable") && /host "doomed" unreachable/.test(e.message));
    await assert.rejects(doomed.client.call("sys.dir", [null]), (e) => isShepherdError(e, "host_unreachable"));
    assert.equal((await doomed.exited).signal, "SIGKILL");
  } finally {
    await doomed.close();
  }
});

test("a stream that closes fails every pending call, and every later one, with [host_unreachable]", async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const client = new RpcClient({ input, output, host: "far-away" });
  input.write(`${JSON.stringify({ hello: { protocol: PROTOCOL_VERSION, bundle: "b", pid: 1, node: "v22" } })}\n`);
  assert.equal((await client.hello).bundle, "b");
  const pending = [client.call("sys.dir", [null]), client.call("files.snapshot", ["a_0123456789"])];
  input.end();
  // What was on its way may have been done there; what comes after was not.
  for (const p of pending)
    await assert.rejects(
      p,
      (e) =>
        e instanceof CallLost &&
        isShepherdError(e, "host_unreachable") &&
        /^\[host_unreachable\] host "far-away" unreachable: the agent's output ended, while the call was on its way: it may have been done there\.$/.test(
          e.message,
        ),
    );
  await assert.rejects(
    client.call("sys.dir", [null]),
    (e) => isShepherdError(e, "host_unreachable") && !(e instanceof CallLost) && /nothing was done there/.test(e.message),
  );
});

test("a line from the agent over 64 MiB ends the channel: what is pending fails [host_unreachable], nothing of it is held", async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const client = new RpcClient({ input, output, host: "h" });
  const pending = client.call("sys.dir", [null]);
  const piece = Buffer.alloc(8 * 1024 * 1024, 0x62);
  for (let i = 0; i < MAX_LINE_BYTES / piece.length + 1; i++) input.write(piece);
  await assert.rejects(pending, (e) => isShepherdError(e, "host_unreachable") && /a line over the protocol's limit/.test(e.message));
  assert.equal(output.writableEnded, true, "the agent's input is ended: it goes");
});

test("an answer's error code not of our shape becomes remote_error; an answer for no call is ignored; a wrong protocol is refused", async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const client = new RpcClient({ input, output, host: "h" });
  const call = client.call("sys.dir", [null]);
  input.write('{"id":999,"ok":"nobody asked"}\n');
  input.write('{"id":1,"err":{"code":"Robert\'); DROP","message":"boom"}}\n');
  await assert.rejects(call, (e) => isShepherdError(e, "remote_error") && /on host "h": boom/.test(e.message));
  const other = new RpcClient({ input: new PassThrough(), output: new PassThrough(), host: "h" });
  const wrong = other as unknown as { o: { input: PassThrough } };
  wrong.o.input.write('{"hello":{"protocol":99}}\n');
  await assert.rejects(other.hello, (e) => isShepherdError(e, "protocol_error") && /protocol 99/.test(e.message));
  await assert.rejects(other.call("sys.dir", [null]), (e) => isShepherdError(e, "host_unreachable"));
});

test("a bare pi on the sheep's PATH whose file is pi's own script runs in the launcher's process; a wrapper or an argv is used as given", async () => {
  const bin = join(dir, "bin");
  const wrap = join(dir, "wrap");
  await mkdir(bin);
  await mkdir(wrap);
  await symlink(piCli, join(bin, "pi"));
  await writeFile(join(wrap, "pi"), '#!/bin/sh\nexec pi-real "$@"\n', { mode: 0o755 });
  assert.deepEqual(inProcessPi(["pi"], { PATH: `relative:${join(dir, "none")}:${bin}` }, "/n/node"), ["/n/node", realpathSync(piCli)]);
  assert.deepEqual(inProcessPi(["pi"], { PATH: `${wrap}:${bin}` }, "/n/node"), ["pi"], "the first on PATH counts, as in a shell");
  assert.deepEqual(inProcessPi(["pi"], { PATH: join(dir, "none") }, "/n/node"), ["pi"]);
  assert.deepEqual(inProcessPi([join(bin, "pi")], { PATH: bin }, "/n/node"), [join(bin, "pi")]);
  assert.deepEqual(inProcessPi(["pi", "--offline"], { PATH: bin }, "/n/node"), ["pi", "--offline"]);
});

test("the private tmux socket: in the state dir when its path fits a unix socket, else in a short private dir of ours", async () => {
  const short = join(dir, "st");
  assert.equal(await privateTmuxSocket(short), join(short, "tmux", "default"));
  assert.equal((await stat(join(short, "tmux"))).mode & 0o777, 0o700);
  const long = join(dir, "x".repeat(120));
  const socket = await privateTmuxSocket(long);
  assert.ok(Buffer.byteLength(socket) <= 100, socket);
  assert.equal(dirname(socket), join(tmpdir(), `pi-shepherd-${userInfo().uid}`));
  assert.equal((await stat(dirname(socket))).mode & 0o777, 0o700);
  assert.equal(await privateTmuxSocket(long), socket, "the same state dir, the same socket: a new agent finds the server again");
  assert.notEqual(await privateTmuxSocket(`${long}2`), socket);
});

test("LineSplitter: lines across chunks, empty lines skipped, an overflow reported once and skipped to its newline", () => {
  const s = new LineSplitter(10);
  assert.deepEqual(s.push(Buffer.from('{"a"')), []);
  assert.deepEqual(s.push(Buffer.from(':1}\n\n{"b":2}\n')), [{ line: '{"a":1}' }, { line: '{"b":2}' }]);
  assert.deepEqual(s.push(Buffer.from("0123456789ab")), [{ overflow: true }]);
  assert.deepEqual(s.push(Buffer.from("cdef\nok\n")), [{ line: "ok" }]);
});

test("a host's egress refusal events reach this end checked: forged, oversized or ill-shaped ones are dropped, text made printable", async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const client = new RpcClient({ input, output, host: "h" });
  const seen: RemoteEvent[] = [];
  client.onEvent((e) => seen.push(e));
  const ok = { ev: "egress-refusal", agentId: "a_0123456789", target: "169.254.169.254:80", reason: "metadata" };
  for (const line of [
    ok,
    { ...ok, target: "evil\u001b]2;owned\u0007:443", error: "3 more\u001b[31m" },
    { ...ok, agentId: "../../x" },
    { ...ok, target: "x".repeat(301) },
    { ...ok, target: "" },
    { ...ok, reason: "Not Allowed; rm -rf" },
    { ...ok, error: "e".repeat(201) },
    { ...ok, target: 7 },
  ])
    input.write(`${JSON.stringify(line)}\n`);
  await new Promise((r) => setImmediate(r));
  assert.equal(seen.length, 2, JSON.stringify(seen));
  assert.deepEqual(seen[0], ok);
  const second = seen[1] as { target: string; error?: string };
  assert.doesNotMatch(`${second.target}${second.error}`, /\u001b|\u0007/);
  assert.match(second.target, /evil.*:443/);
  client.close("done");
});
