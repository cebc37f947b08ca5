/**
 * Remote sheep across the shepherd's own end (issue 24, "Faults: nothing lost"): a /reload while a
 * remote sheep works, a shepherd killed while one works and a new one on the same agent dir, and a
 * quit. The next shepherd adopts the remote sheep as it adopts local ones (their records name their
 * host; its first call to the host connects again), the answers arrive once, and a quit leaves
 * nothing of ours on either side: no pane, no process there, no ssh here, no control socket.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertNothingLeftRemote, type RemoteWorld, remoteSheepPid, remoteWorld } from "../support/remote-world.ts";
import { type RpcShepherd, repoRoot } from "../support/rpc-shepherd.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

type Agent = { agentId: string; host?: string };

describe("remote sheep across a reload, a crash and a quit of their shepherd", { timeout: 600_000 }, () => {
  let rw: RemoteWorld;
  let model: ScriptedModel;
  const launch = (): RpcShepherd => rw.world.shepherd({ extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
  const ok = async (s: RpcShepherd, args: unknown) => (await s.ok(args)).details;
  const notified = (s: RpcShepherd, re: RegExp) =>
    s.next((e) => e.type === "extension_ui_request" && e.method === "notify" && re.test(String(e.message)), 60_000);
  const startFar = async (s: RpcShepherd, label: string) => (await ok(s, { action: "start", agent: "echo", label, host: "box" })).agent as Agent;
  const promptFar = async (s: RpcShepherd, agentId: string, reply: string, tag: string) =>
    ((await ok(s, { action: "prompt", agentId, message: directive({ reply, delayMs: 3000, tag }) })).prompt as { promptId: string }).promptId;

  before(async () => {
    rw = await remoteWorld("remote-adopt");
    model = rw.world.model;
  });

  after(() => rw?.world.cleanup());

  it("a prompt to a remote sheep sent before /reload is answered after it, once", async () => {
    const s = launch();
    const a = await startFar(s, "far-reload");
    const promptId = await promptFar(s, a.agentId, "across the reload, from afar", "ADOPT-RELOAD");
    const reattached = notified(s, /re-attached 1 sheep/);
    await s.command({ type: "prompt", message: "/test-reload" });
    await reattached;
    const [r] = (await ok(s, { action: "wait", promptId, timeout: 120 })).results as { status: string; text: string }[];
    assert.deepEqual([r!.status, r!.text], ["completed", "across the reload, from afar"]);
    assert.equal(model.log.filter((l) => l.tag === "ADOPT-RELOAD").length, 1, "the model was asked once");
    const st = (await ok(s, { action: "status", agentId: a.agentId })).status as { state: string; host?: string };
    assert.deepEqual([st.state, st.host], ["idle", "box"]);
    await ok(s, { action: "close", agentId: a.agentId });
    await s.stop();
  });

  it("a new shepherd adopts the remote sheep of one that was killed mid-prompt, gets its answer and closes it", async () => {
    const first = launch();
    const a = await startFar(first, "far-orphan");
    const pid = await remoteSheepPid(rw.remote, a.agentId);
    const promptId = await promptFar(first, a.agentId, "still here, far away", "ADOPT-CRASH");
    first.proc.kill("SIGKILL"); // a crash: nothing closed, no connection ended by it
    await Promise.resolve(first.proc).catch(() => undefined);
    assert.ok((await rw.remote.pids()).includes(pid), "the remote sheep outlived its shepherd");
    const second = launch();
    const reattached = notified(second, /re-attached 1 sheep/);
    await second.command({ type: "get_state" });
    await reattached;
    const [r] = (await ok(second, { action: "wait", promptId, timeout: 120 })).results as { status: string; text: string }[];
    assert.deepEqual([r!.status, r!.text], ["completed", "still here, far away"]);
    const herd = (await ok(second, { action: "herd" })).agents as Agent[];
    assert.deepEqual(
      herd.map((h) => [h.agentId, h.host]),
      [[a.agentId, "box"]],
    );
    await ok(second, { action: "close", agentId: a.agentId });
    await second.stop();
    // The pane is gone when close returns; pi there ends a moment later (no pid of another machine is waited on).
    let running = true;
    for (let i = 0; i < 100 && running; i++) {
      running = (await rw.remote.pids()).includes(pid);
      if (running) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(running, false, "closed: its pi ended there");
  });

  // The killed shepherd's master would hold its connection for its idle time; the next one ended it.
  it("a quit closes its idle remote sheep and ends its connection: nothing of ours on either side, the killed shepherd's master included", async () => {
    const s = launch();
    await startFar(s, "far-quit");
    await s.stop();
    await assertNothingLeftRemote(rw, { shepherdsStopped: true });
  });
});
