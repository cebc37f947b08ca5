/**
 * The wire's tables: one per port, and together exactly the methods of protocol 1 (a name added,
 * lost or misspelt is a change of the protocol, not of a table). Each entry's parameter check is
 * the far end's, its answer check the shepherd's.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isShepherdError } from "../../../src/domain/errors.ts";
import { PROTOCOL_VERSION } from "../../../src/remote/rpc/call.ts";
import { FILES_WIRE } from "../../../src/remote/rpc/wire/sheep-files.ts";
import { RUNTIME_WIRE } from "../../../src/remote/rpc/wire/runtime.ts";
import { SYS_WIRE } from "../../../src/remote/rpc/wire/sys.ts";
import { METHODS, WIRE } from "../../../src/remote/rpc/wire/table.ts";

const PROTOCOL_1 = [
  "init",
  "sys.dir",
  "sys.info",
  "runtime.createPane",
  "runtime.liveness",
  "runtime.markedPanes",
  "runtime.read",
  "runtime.close",
  "runtime.relabel",
  "runtime.agentStatus",
  "runtime.reportState",
  "files.prepare",
  "files.staleSpecs",
  "files.snapshot",
  "files.result",
  "files.submit",
  "files.messages",
  "files.replies",
  "files.replyText",
  "files.reply",
  "files.subscribe",
  "files.unsubscribe",
  "files.evidencePath",
  "files.cleanup",
  "files.relabel",
  "files.discard",
  "files.renewed",
  "files.residentKb",
  "files.resumeCard",
  "files.resumeCards",
  "files.conversation",
  "files.egress",
  "ws.baseline",
  "ws.diff",
  "ws.isolate",
  "ws.inspect",
  "ws.remove",
  "ws.land",
  "ws.sync",
  "ws.conflicts",
  "ws.branchState",
  "term.watch",
  "term.unwatch",
  "term.keys",
];

test("the tables hold exactly protocol 1's methods, each once, each in its port's table", () => {
  assert.equal(PROTOCOL_VERSION, 1);
  assert.deepEqual([...METHODS.keys()].sort(), [...PROTOCOL_1].sort());
  const count = Object.values(WIRE).reduce((n, table) => n + Object.keys(table).length, 0);
  assert.equal(count, PROTOCOL_1.length, "a name in two entries would hide one of them");
  for (const [name, { port }] of METHODS) {
    if (port === "sys") assert.ok(name === "init" || name.startsWith("sys."), name);
    else assert.ok(name.startsWith(`${port}.`), `${name} is in the ${port} table`);
  }
  assert.equal(METHODS.get("constructor"), undefined);
  assert.equal(METHODS.get("__proto__"), undefined);
});

test("an entry's parameter check names the method and the parameter, and hands on typed values", () => {
  const invalid = (re: RegExp) => (e: unknown) => isShepherdError(e, "invalid_params") && re.test((e as Error).message);
  assert.deepEqual(RUNTIME_WIRE.read.params([{ paneId: "%1", agentId: "", extra: 1 }, 40]), [{ paneId: "%1", agentId: "" }, 40]);
  assert.throws(
    () => RUNTIME_WIRE.read.params([{ paneId: "%1", agentId: "" }, "40"]),
    invalid(/^\[invalid_params\] runtime\.read: parameter 2 must be a number\.$/),
  );
  assert.throws(() => RUNTIME_WIRE.read.params([{ paneId: 1 }, 40]), invalid(/runtime\.read: parameter 1 must be a pane \{paneId, agentId\}/));
  assert.throws(() => RUNTIME_WIRE.liveness.params([{}]), invalid(/runtime\.liveness: parameter 1 must be a list of panes/));
  assert.throws(() => RUNTIME_WIRE.createPane.params([[]]), invalid(/runtime\.createPane: parameter 1 must be an object/));
  assert.throws(() => FILES_WIRE.snapshot.params(["../x"]), invalid(/files\.snapshot: "\.\.\/x" is no agent id/));
  assert.throws(() => FILES_WIRE.reply.params(["a_0123456789", "m_1"]), invalid(/files\.reply: parameter 3 must be a string/));
  assert.deepEqual(SYS_WIRE.dir.params([]), [null]);
  assert.throws(() => SYS_WIRE.dir.params([7]), invalid(/^\[invalid_params\] sys\.dir: its parameter must be a path or null\.$/));
  assert.throws(() => SYS_WIRE.init.params([{ agentDir: "rel" }]), invalid(/init: agentDir must be an absolute path/));
});

test("an entry's answer check: the shape, and where it must echo a parameter, the parameter", () => {
  const params = FILES_WIRE.result.params(["a_0123456789", "p_1"]);
  assert.ok(FILES_WIRE.result.answer({ promptId: "p_1", status: "completed", text: "ok" }, params));
  assert.ok(FILES_WIRE.result.answer(null, params));
  assert.ok(!FILES_WIRE.result.answer({ promptId: "p_2", status: "completed", text: "ok" }, params));
  assert.ok(!RUNTIME_WIRE.createPane.answer({ paneId: "not a pane" }, [{} as never]));
  assert.ok(SYS_WIRE.init.answer({ runtime: "tmux", stateDir: "/s", home: "/h" }, [{} as never]));
  assert.ok(!SYS_WIRE.init.answer({ runtime: "screen", stateDir: "/s", home: "/h" }, [{} as never]));
});
