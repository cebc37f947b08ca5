/**
 * A remote host whose link is down, with real OpenSSH and real pi sheep on the test's remote host
 * (test/support/remote-host.ts), nothing lost (issue 24): the link cut mid-wait (longer than ssh's
 * keepalives give it) and restored: the sheep kept working under the remote tmux, the shepherd
 * reconnected, the wait returns the answer once. While the host is unreachable status says so
 * (it does not fail), a prompt is refused [host_unreachable], never sent later, and a wait whose
 * deadline comes first returns timeout (waited again, the answer). Each delegate
 * result names its host.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RemoteHost } from "../support/remote-host.ts";
import { type FaultWorld, faultWorld } from "../support/remote-faults.ts";
import type { RpcShepherd } from "../support/rpc-shepherd.ts";
import { type Item, type Scene, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("remote sheep while the link is down", { timeout: 900_000 }, () => {
  let f: FaultWorld;
  let remote: RemoteHost;
  let model: ScriptedModel;
  let scene: Scene;
  let shepherd: RpcShepherd;
  const ok = (args: unknown) => scene.ok(args);

  before(async () => {
    f = await faultWorld("remote-link-down");
    ({ remote, model, scene, shepherd } = f);
  });

  after(() => f?.rw.world.cleanup());

  it("the link cut mid-wait and restored: the sheep went on working there, and its answer arrives once", async () => {
    await f.untilReachable();
    await f.fresh("cut");
    const { promptId, item } = await f.waitThrough("CUT", 15_000, async () => {
      await remote.cut();
      // Longer than ssh's keepalives give up (6 s): the connection is lost, not merely stalled.
      await sleep(15_000);
      await remote.restore();
    });
    await f.arrivedOnce("CUT", promptId, item);
  });

  it("while the host is unreachable, status says so and a prompt is refused [host_unreachable], never queued; restored, it works", async () => {
    await f.untilReachable();
    await f.fresh("down");
    await remote.cut();
    try {
      // Until ssh's keepalives give up on the link; status says so, it does not fail.
      let status = await shepherd.call({ action: "status", agentId: f.sheep });
      for (let i = 0; i < 30 && !/host unreachable since/.test(status.text); i++) {
        await sleep(1_000);
        status = await shepherd.call({ action: "status", agentId: f.sheep });
      }
      assert.equal(status.isError, false, status.text);
      assert.match(status.text, /host unreachable since \d{4}-\d\d-\d\dT/);
      assert.match((await ok({ action: "herd" })).text, /host unreachable since/);
      const from = model.log.length;
      await scene.fails(
        { action: "prompt", agentId: f.sheep, message: directive({ reply: "never", tag: "QUEUED" }) },
        /^\[host_unreachable\] host "box" unreachable since /,
      );
      await remote.restore();
      await sleep(1_000);
      assert.equal(model.log.slice(from).filter((l) => l.tag === "QUEUED").length, 0, "the refused prompt was not sent later");
    } finally {
      await remote.restore();
    }
    let r: Item | undefined;
    for (let i = 0; i < 60 && r === undefined; i++) {
      const p = await scene.shepherd.call({ action: "prompt", agentId: f.sheep, message: directive({ reply: "back", tag: `BACK-${i}` }) });
      if (!p.isError) r = await scene.wait((p.details.prompt as { promptId: string }).promptId, 60);
      else await sleep(1_000);
    }
    assert.deepEqual([r?.status, r?.text], ["completed", "back"]);
    assert.doesNotMatch((await ok({ action: "status", agentId: f.sheep })).text, /unreachable/);
  });

  it("a wait whose deadline comes while the host is still unreachable returns timeout, not an error; waited again after, the answer", async () => {
    await f.untilReachable();
    await f.fresh("patient");
    const promptId = await scene.prompt(f.sheep, directive({ reply: "answer LATE", delayMs: 20_000, tag: "LATE" }));
    await untilLogged(model, "LATE");
    await remote.cut();
    let r: Item;
    try {
      r = await scene.wait(promptId, 12);
    } finally {
      await remote.restore();
    }
    assert.equal(r.status, "timeout", JSON.stringify(r));
    assert.match(r.error ?? "", /^\[timeout\] /);
    await f.untilReachable();
    const again = await scene.wait(promptId, 120);
    assert.deepEqual([again.status, again.text], ["completed", "answer LATE"], JSON.stringify(again));
    assert.equal(model.log.filter((l) => l.tag === "LATE").length, 1, "the prompt reached the model once");
  });

  it("delegate's results name each task's host (every result names its host)", async () => {
    await f.untilReachable();
    const r = await ok({
      action: "delegate",
      tasks: [
        { agent: "echo", task: directive({ reply: "done far" }), host: "box" },
        { agent: "echo", task: directive({ reply: "done near" }) },
      ],
    });
    const results = r.details.results as { status: string; host?: string }[];
    assert.deepEqual(
      results.map((x) => [x.status, x.host]),
      [
        ["completed", "box"],
        ["completed", undefined],
      ],
    );
  });
});
