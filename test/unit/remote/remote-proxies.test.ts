/**
 * The proxies on a RemoteCall of the test's own: what they send, how they check what comes back
 * (a remote host's answer is hostile data), and the sheep-files port's subscriptions across a reconnect.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { execa } from "execa";
import { isShepherdError, ShepherdError } from "../../../src/domain/errors.ts";
import type { RemoteCall, RemoteEvent } from "../../../src/remote/rpc/call.ts";
import { CallLost } from "../../../src/remote/rpc/lost-call.ts";
import { attachHintVia } from "../../../src/remote/link/attach-hint.ts";
import { remotePorts } from "../../../src/remote/rpc/ports.ts";

class FakeCall implements RemoteCall {
  readonly sent: [string, unknown[]][] = [];
  answers = new Map<string, unknown>();
  down = false;
  /** The next calls of these methods go out and their connection goes with them. */
  lose = new Set<string>();
  private readonly events = new Set<(e: RemoteEvent) => void>();
  private readonly reconnects = new Set<() => void>();

  async call(method: string, params: unknown[]): Promise<unknown> {
    this.sent.push([method, params]);
    if (this.lose.delete(method)) {
      this.down = true;
      throw new CallLost('host "h" unreachable: test, while the call was on its way: it may have been done there.');
    }
    if (this.down) throw new ShepherdError("host_unreachable", 'host "h" unreachable since now: test.');
    return this.answers.get(method);
  }
  onEvent(cb: (e: RemoteEvent) => void): () => void {
    this.events.add(cb);
    return () => this.events.delete(cb);
  }
  onReconnect(cb: () => void): () => void {
    this.reconnects.add(cb);
    return () => this.reconnects.delete(cb);
  }
  emit(agentId: string) {
    for (const cb of this.events) cb({ ev: "change", agentId });
  }
  reconnect() {
    for (const cb of this.reconnects) cb();
  }
  methods(name: string) {
    return this.sent.filter(([m]) => m === name).map(([, p]) => p);
  }
}

const A = "a_0123456789";
const B = "a_abcdefghij";
const settle = () => new Promise((r) => setImmediate(r));

test("one remote subscription per sheep however many listen; events reach its listeners only; the last to leave unsubscribes", async () => {
  const call = new FakeCall();
  const { files: host } = remotePorts(call, { host: "h", runtime: "tmux" });
  let a1 = 0;
  let a2 = 0;
  let b = 0;
  const offA1 = host.subscribe(A, () => a1++);
  const offA2 = host.subscribe(A, () => a2++);
  const offB = host.subscribe(B, () => b++);
  await settle();
  assert.deepEqual(call.methods("files.subscribe"), [[A], [B]]);
  call.emit(A);
  assert.deepEqual([a1, a2, b], [1, 1, 0]);
  offA1();
  offA1();
  await settle();
  assert.deepEqual(call.methods("files.unsubscribe"), [], "a listener remains");
  offA2();
  await settle();
  assert.deepEqual(call.methods("files.unsubscribe"), [[A]]);
  call.emit(A);
  assert.deepEqual([a1, a2], [1, 1]);
  offB();
});

test("a reconnect subscribes every listened-to sheep again and has every listener look once", async () => {
  const call = new FakeCall();
  const { files: host } = remotePorts(call, { host: "h", runtime: "tmux" });
  call.down = true;
  let a = 0;
  let b = 0;
  host.subscribe(A, () => a++);
  host.subscribe(B, () => b++);
  await settle(); // the failed subscriptions are no unhandled rejection
  call.down = false;
  call.reconnect();
  await settle();
  assert.deepEqual(call.methods("files.subscribe"), [[A], [B], [A], [B]]);
  assert.deepEqual([a, b], [1, 1]);
});

test("answers of the wrong shape are [protocol_error]; a result for another prompt is refused; liveness keeps only the sheep asked about", async () => {
  const call = new FakeCall();
  const { runtime, files: host, workspace } = remotePorts(call, { host: "h", runtime: "tmux" });
  call.answers.set("files.result", { promptId: "p_other00000", status: "completed", text: "forged" });
  await assert.rejects(host.result(A, "p_0123456789"), (e) => isShepherdError(e, "protocol_error") && /host "h" answered files.result/.test(e.message));
  call.answers.set("files.result", null);
  assert.equal(await host.result(A, "p_0123456789"), undefined);
  call.answers.set("files.prepare", { sessionPath: "/s", command: { argv: ["node", 7], reporting: [] } });
  await assert.rejects(host.prepare({} as never), (e) => isShepherdError(e, "protocol_error"));
  call.answers.set("runtime.liveness", [
    [A, { state: "alive" }],
    [B, { state: "alive" }],
  ]);
  assert.deepEqual([...(await runtime.liveness([{ paneId: "%1", agentId: A }]))], [[A, { state: "alive" }]]);
  call.answers.set("runtime.liveness", [[A, { state: "exited", exit: { code: "0; rm", signal: null } }]]);
  await assert.rejects(runtime.liveness([{ paneId: "%1", agentId: A }]), (e) => isShepherdError(e, "protocol_error"));
  call.answers.set("files.replies", [["m_0123456789", "replied"]]);
  assert.deepEqual(await host.replies(A), new Map([["m_0123456789", "replied"]]));
  call.answers.set("files.reply", "sure");
  await assert.rejects(host.reply(A, "m_0123456789", "x"), (e) => isShepherdError(e, "protocol_error"));
  // What the records keep must be of the records' shapes, or the sheep is set aside at the next load;
  // and what the core reads of a sheep (its snapshot, its conversation's lines) is checked field by field.
  for (const paneId of ["a b", "-t", "%1;x", ""]) {
    call.answers.set("runtime.createPane", { paneId });
    await assert.rejects(runtime.createPane({} as never), (e) => isShepherdError(e, "protocol_error"), paneId);
  }
  call.answers.set("runtime.markedPanes", [{ paneId: "%1", agentId: "../a" }]);
  await assert.rejects(runtime.markedPanes(), (e) => isShepherdError(e, "protocol_error"));
  for (const forged of [{ ready: { pid: "1", readyAt: "t" } }, { exited: { code: "0; rm", signal: null, at: "t" } }, { asking: { messageId: 5, text: "x" } }]) {
    call.answers.set("files.snapshot", forged);
    await assert.rejects(host.snapshot(A), (e) => isShepherdError(e, "protocol_error"), JSON.stringify(forged));
  }
  call.answers.set("files.snapshot", { ready: { pid: 7, readyAt: "2026-01-01T00:00:00.000Z" }, piGone: true });
  assert.deepEqual(await host.snapshot(A), { ready: { pid: 7, readyAt: "2026-01-01T00:00:00.000Z" }, piGone: true });
  call.answers.set("files.conversation", { sessionPath: "/s", earlier: false, turns: [{ lines: [{ kind: "prompt", text: 5 }] }] });
  await assert.rejects(host.conversation(A, 3), (e) => isShepherdError(e, "protocol_error"));
  call.answers.set("files.conversation", { sessionPath: "/s", earlier: false, turns: [{ lines: [{ kind: "answer", text: "hi" }] }] });
  assert.deepEqual((await host.conversation(A, 3)).turns, [{ lines: [{ kind: "answer", text: "hi" }] }]);
  // A sandboxed sheep's egress log as its host read it: no report is a protocol error, a report's fields are checked here again.
  call.answers.set("files.egress", { allowed: 1, entries: "none" });
  await assert.rejects(host.egress!(A, 5), (e) => isShepherdError(e, "protocol_error"));
  call.answers.set("files.egress", null);
  assert.equal(await host.egress!(A, 5), undefined);
  const attempt = { time: "2026-01-01T00:00:00.000Z", method: "CONNECT", bytesUp: 0, bytesDown: 0, durationMs: 0 };
  call.answers.set("files.egress", {
    allowed: 1,
    refused: Number.POSITIVE_INFINITY,
    bytesUp: 5,
    bytesDown: 7,
    skipped: 0,
    entries: [{ ...attempt, target: "a:1", verdict: "refused" }, { ...attempt, target: "b\u001b[2J:2", verdict: "allowed" }, { target: 1 }],
  });
  const eg = (await host.egress!(A, 2))!;
  assert.deepEqual([eg.allowed, eg.refused, eg.skipped, eg.entries.map((x) => x.target)], [1, 0, 1, ["b:2"]]);
  // A patch at a path it was not asked for (say, a key file of this machine) is no answer.
  const oid = "a".repeat(40);
  const answered = (patchPath: string) => ({
    baseline: { root: "/r", tree: oid, takenAt: "t" },
    after: oid,
    afterAt: "t",
    files: [],
    fileCount: 0,
    insertions: 0,
    deletions: 0,
    patchPath,
    patch: "",
    truncated: false,
  });
  call.answers.set("ws.diff", answered("/home/me/.ssh/id_ed25519"));
  await assert.rejects(workspace.diff({ root: "/r", tree: oid, takenAt: "t" }, { patchPath: "/state/p.patch", inlineLines: 5 }), (e) =>
    isShepherdError(e, "protocol_error"),
  );
  call.answers.set("ws.diff", answered("/state/p.patch"));
  assert.equal((await workspace.diff({ root: "/r", tree: oid, takenAt: "t" }, { patchPath: "/state/p.patch", inlineLines: 5 })).patchPath, "/state/p.patch");
  call.answers.set("ws.conflicts", "a.txt");
  await assert.rejects(workspace.conflicts({ path: "/w", branch: "shepherd/x", repoRoot: "/r", base: "c", leftBehind: 0 }), (e) =>
    isShepherdError(e, "protocol_error"),
  );
  // A branch's state is counts and names only: text where a count goes is no answer of ours.
  const wt = { path: "/w", branch: "shepherd/x", repoRoot: "/r", base: "c", leftBehind: 0 };
  const state = { exists: true, branch: "shepherd/x", into: "main", ahead: 1, behind: 0, conflicts: [], uncommitted: 0, worked: true, landed: false };
  call.answers.set("ws.branchState", { ...state, ahead: "1; rm -rf" });
  await assert.rejects(workspace.branchState!(wt), (e) => isShepherdError(e, "protocol_error"));
  call.answers.set("ws.branchState", state);
  assert.deepEqual(await workspace.branchState!(wt), state);
  assert.equal(host.running?.(A), undefined);
});

test("what the proxies send: the port's arguments in order, a pane as {paneId, agentId}, a host's errors as they came", async () => {
  const call = new FakeCall();
  const { runtime, files: host } = remotePorts(call, { host: "h", runtime: "herdr" });
  assert.equal(runtime.name, "herdr");
  call.answers.set("runtime.read", "screen");
  assert.equal(await runtime.read("%3", 40), "screen");
  await runtime.close("%3", A);
  await host.submit(A, { kind: "steer", steerId: "s_0123456789", target: "p_0123456789", text: "left" });
  assert.deepEqual(call.sent, [
    ["runtime.read", [{ paneId: "%3", agentId: "" }, 40]],
    ["runtime.close", ["%3", A]],
    ["files.submit", [A, { kind: "steer", steerId: "s_0123456789", target: "p_0123456789", text: "left" }]],
  ]);
  call.answers.set("sys.dir", "/home/far");
  const { dir } = remotePorts(call, { host: "h", runtime: () => "tmux" });
  assert.equal(await dir(undefined), "/home/far");
  assert.deepEqual(call.sent.at(-1), ["sys.dir", [null]]);
  call.answers.set("sys.dir", 42);
  await assert.rejects(dir("x"), (e) => isShepherdError(e, "protocol_error"));
  call.answers.set("runtime.createPane", { paneId: "%9" });
  const lazy = remotePorts(call, { host: "h", runtime: () => "herdr" }).runtime;
  assert.equal(lazy.name, "herdr");
  assert.deepEqual(await lazy.createPane({} as never), { paneId: "%9", runtime: "herdr" });
  // The hint to watch a pane there is that machine's command, run from here through ssh: the
  // host's text is one quoted word of this machine's line, read by the remote shell only.
  const honest = "tmux -S '/srv/pi agent/s' attach -t %9";
  call.answers.set("runtime.createPane", { paneId: "%9", attachHint: honest });
  const far = remotePorts(call, { host: "h", runtime: "tmux", attachHere: attachHintVia({ ssh: "me@gpu", sshOptions: ["-p", "2222"] }) }).runtime;
  const line = (await far.createPane({} as never)).attachHint!;
  assert.equal(line, `'ssh' '-t' '-p' '2222' '--' 'me@gpu' 'tmux -S '\\''/srv/pi agent/s'\\'' attach -t %9'`);
  const words = await execa("sh", ["-c", `printf '%s\\n' ${line}`]);
  assert.deepEqual(words.stdout.split("\n"), ["ssh", "-t", "-p", "2222", "--", "me@gpu", honest], "here: ssh's own words, the host's line whole as one");
  // A hostile host's hint runs nothing here when a person pastes the line.
  const marks = await mkdtemp(join(tmpdir(), "pi-shepherd-hint-"));
  try {
    call.answers.set("runtime.createPane", { paneId: "%9", attachHint: `x; touch ${join(marks, "pwned")}; $(touch ${join(marks, "sub")})` });
    const hostile = (await far.createPane({} as never)).attachHint!;
    await execa("sh", ["-c", `printf '%s\\n' ${hostile}`]);
    assert.deepEqual(await readdir(marks), [], "nothing of the host's text ran on this machine");
  } finally {
    await rm(marks, { recursive: true, force: true });
  }
  call.answers.set("runtime.createPane", { paneId: "%9", attachHint: "tmux attach\u001b]2;retitled\u0007" });
  assert.equal((await far.createPane({} as never)).attachHint, undefined, "a hint with a control character is dropped");
  call.answers.set("runtime.createPane", { paneId: "%9", attachHint: "run `herdr` and open workspace w1 (pane p1)" });
  const herdr = remotePorts(call, { host: "h", runtime: "herdr", attachHere: attachHintVia({ ssh: "me@gpu" }) }).runtime;
  assert.equal((await herdr.createPane({} as never)).attachHint, "'ssh' '-t' '--' 'me@gpu', then there: run `herdr` and open workspace w1 (pane p1)");
  call.answers.set("runtime.createPane", { paneId: "%9", attachHint: "tmux -S /run/s attach -t %9" });
  assert.equal((await lazy.createPane({} as never)).attachHint, "tmux -S /run/s attach -t %9", "no destination: the hint as it came");
  call.down = true;
  await assert.rejects(host.snapshot(A), (e) => isShepherdError(e, "host_unreachable"));
});

const PROMPT = { kind: "prompt" as const, promptId: "p_0123456789", text: "count the sheep" };

test("a delivery lost on its way is sent again once the host is back (the sheep takes it once by its id), and the caller is told it went", async () => {
  const call = new FakeCall();
  const { files: host } = remotePorts(call, { host: "h", runtime: "tmux", lostCallWaitMs: 60_000 });
  call.lose.add("files.submit");
  let done = false;
  const submitted = host.submit(A, PROMPT).then(() => (done = true));
  await settle();
  assert.equal(call.methods("files.submit").length, 2, "lost, then tried at once and refused: the host is down");
  assert.equal(done, false, "it waits for the host");
  call.down = false;
  call.reconnect();
  await submitted;
  assert.deepEqual(
    call.methods("files.submit"),
    [
      [A, PROMPT],
      [A, PROMPT],
      [A, PROMPT],
    ],
    "the same delivery, its id kept",
  );
});

test("a delivery lost on its way whose host does not come back in time: the caller is told it may have reached the sheep", async () => {
  const call = new FakeCall();
  const { files: host } = remotePorts(call, { host: "h", runtime: "tmux", lostCallWaitMs: 30 });
  call.lose.add("files.submit");
  await assert.rejects(
    host.submit(A, PROMPT),
    (e) => e instanceof CallLost && isShepherdError(e, "host_unreachable") && /did not take it again within 0 s: it may have reached the sheep/.test(e.message),
  );
  assert.ok(call.methods("files.submit").length >= 3, "sent again at the end, once more");
});

test("a delivery refused while the host is down is not sent again: nothing was done there", async () => {
  const call = new FakeCall();
  const { files: host } = remotePorts(call, { host: "h", runtime: "tmux", lostCallWaitMs: 60_000 });
  call.down = true;
  await assert.rejects(host.submit(A, PROMPT), (e) => isShepherdError(e, "host_unreachable") && !(e instanceof CallLost));
  assert.equal(call.methods("files.submit").length, 1);
});

const PANE = {
  agentId: A,
  placement: "tab" as const,
  direction: "right" as const,
  cwd: "/w",
  label: "iso",
  command: { argv: ["pi"], reporting: ["sh", "x", "pi"] },
};

test("a pane create lost on its way: once the host is back the pane it made there, found by its mark, is closed, and the start is told", async () => {
  const call = new FakeCall();
  const { runtime } = remotePorts(call, { host: "h", runtime: "tmux", lostCallWaitMs: 60_000 });
  call.lose.add("runtime.createPane");
  const created = runtime.createPane(PANE).catch((e: unknown) => e);
  await settle();
  call.answers.set("runtime.markedPanes", [
    { paneId: "%7", agentId: A },
    { paneId: "%8", agentId: B },
  ]);
  call.down = false;
  call.reconnect();
  const e = await created;
  assert.ok(e instanceof CallLost && /back again, the pane it had made there is closed\. Start the sheep again\.$/.test(e.message), String(e));
  assert.deepEqual(call.methods("runtime.close"), [["%7", A]], "only its own pane, by its mark");
});

test("a pane create lost on its way whose host stays away: the start is told a pane may run there", async () => {
  const call = new FakeCall();
  const { runtime } = remotePorts(call, { host: "h", runtime: "tmux", lostCallWaitMs: 30 });
  call.lose.add("runtime.createPane");
  await assert.rejects(runtime.createPane(PANE), (e) => e instanceof CallLost && /a pane may run there with pi in it that nothing here holds/.test(e.message));
  assert.deepEqual(call.methods("runtime.close"), []);
});

test("a host's stale launch specs: asked with their age, each id checked; an answer not of agent ids is refused", async () => {
  const call = new FakeCall();
  const { files: host } = remotePorts(call, { host: "h", runtime: "tmux" });
  call.answers.set("files.staleSpecs", [{ agentId: A, extra: "ignored" }]);
  assert.deepEqual(await host.staleSpecs!(600_000), [{ agentId: A }]);
  assert.deepEqual(call.methods("files.staleSpecs"), [[600_000]]);
  call.answers.set("files.staleSpecs", [{ agentId: "../../etc" }]);
  await assert.rejects(host.staleSpecs!(600_000), /\[protocol_error\] /);
});

test("a sheep's agent status is asked of a herdr host, and of a tmux host never (tmux keeps none)", async () => {
  const call = new FakeCall();
  call.answers.set("runtime.agentStatus", "working");
  const herdr = remotePorts(call, { host: "h", runtime: "herdr" }).runtime;
  assert.equal(await herdr.agentStatus!("w1:p1"), "working");
  assert.deepEqual(call.methods("runtime.agentStatus"), [[{ paneId: "w1:p1", agentId: "" }]]);
  // Known only after init: the host's runtime as it is when asked.
  let name: "tmux" | "herdr" = "tmux";
  const lazy = remotePorts(call, { host: "h", runtime: () => name }).runtime;
  assert.equal(await lazy.agentStatus!("%3"), undefined);
  assert.equal(call.methods("runtime.agentStatus").length, 1, "a tmux host is not asked");
  name = "herdr";
  assert.equal(await lazy.agentStatus!("w1:p2"), "working");
  assert.equal(call.methods("runtime.agentStatus").length, 2);
});
