/**
 * A sandboxed sheep's state told to the multiplexer of the host it runs on (issue 33): the
 * RemoteRuntime proxy's reportState, over the real far end's answering (AgentServer, one JSON line
 * each way), reaches that host's runtime with the same arguments; the far end checks them first
 * (hostile there too: the pane id goes onto herdr's command line); a tmux host, which shows no
 * such state, answers without error.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isShepherdError, ShepherdError } from "../../../src/domain/errors.ts";
import type { ReportedState, Runtime } from "../../../src/ports/runtime.ts";
import type { RemoteCall } from "../../../src/remote/rpc/call.ts";
import { RemoteRuntime } from "../../../src/remote/rpc/remote-runtime.ts";
import { AgentServer } from "../../../src/remote/server/serve.ts";
import { sheepSideIn } from "../../../src/remote/server/setup.ts";
import { TmuxRuntime } from "../../../src/runtimes/tmux/runtime.ts";

/** The far end's answering over lines, its hosted runtime the test's own (as init would have set it up). */
function farEnd(runtime: Runtime): RemoteCall {
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const server = new AgentServer({
    side: sheepSideIn("/nonexistent"),
    write: (line) => {
      const a = JSON.parse(line) as { id: number; ok?: unknown; err?: { code: string; message: string } };
      const p = pending.get(a.id);
      pending.delete(a.id);
      if (a.err) p?.reject(new ShepherdError(a.err.code as never, a.err.message));
      else p?.resolve(a.ok);
    },
  });
  (server as unknown as { hosted: unknown }).hosted = { runtime };
  let next = 1;
  return {
    call: (m, p) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        server.line(JSON.stringify({ id, m, p }));
      }),
    onEvent: () => () => undefined,
    onReconnect: () => () => undefined,
  };
}

test("the proxy's reportState reaches the host's runtime's reportState with the same pane and state", async () => {
  const told: [string, ReportedState][] = [];
  const herdr = { name: "herdr", reportState: async (paneId: string, state: ReportedState) => void told.push([paneId, state]) };
  const rt = new RemoteRuntime(farEnd(herdr as unknown as Runtime), "herdr", "gpu");
  await rt.reportState("w1:p2", "working");
  await rt.reportState("w1:p2", "blocked");
  await rt.reportState("w1-3", "idle");
  assert.deepEqual(told, [
    ["w1:p2", "working"],
    ["w1:p2", "blocked"],
    ["w1-3", "idle"],
  ]);
});

test("the far end refuses a state or pane id that is none, before its runtime is asked; its runtime's failure comes back as it was", async () => {
  const told: unknown[] = [];
  const herdr = { name: "herdr", reportState: async (...a: unknown[]) => void told.push(a) };
  const call = farEnd(herdr as unknown as Runtime);
  const invalid = (re: RegExp) => (e: unknown) => isShepherdError(e, "invalid_params") && re.test((e as Error).message);
  await assert.rejects(call.call("runtime.reportState", ["w1:p2", "done"]), invalid(/runtime\.reportState: parameter 2 must be one of idle, working, blocked/));
  await assert.rejects(call.call("runtime.reportState", ["w1:p2"]), invalid(/parameter 2 must be one of/));
  await assert.rejects(call.call("runtime.reportState", ["--help", "idle"]), invalid(/runtime\.reportState: "--help" is no pane id/));
  await assert.rejects(call.call("runtime.reportState", ["a b", "idle"]), invalid(/is no pane id/));
  await assert.rejects(call.call("runtime.reportState", [7, "idle"]), invalid(/parameter 1 must be a string/));
  assert.deepEqual(told, []);

  const failing = { name: "herdr", reportState: async () => Promise.reject(new ShepherdError("runtime_unavailable", "herdr is not running.")) };
  const rt = new RemoteRuntime(farEnd(failing as unknown as Runtime), "herdr", "gpu");
  await assert.rejects(rt.reportState("w1:p2", "idle"), (e) => isShepherdError(e, "runtime_unavailable"));
});

test("a tmux host, whose runtime shows no such state, answers without error", async () => {
  const tmux = new TmuxRuntime();
  assert.equal((tmux as Runtime).reportState, undefined, "tmux has no reportState: the far end answers nothing");
  const rt = new RemoteRuntime(farEnd(tmux), "tmux", "gpu");
  assert.equal(await rt.reportState("%3", "working"), undefined);
});
