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
import { type RemoteWorld, remoteWorld } from "../support/remote-world.ts";
import type { RpcShepherd, ToolOutcome } from "../support/rpc-shepherd.ts";
import { type Item, type Scene, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("remote sheep while the link is down", { timeout: 900_000 }, () => {
  let rw: RemoteWorld;
  let remote: RemoteHost;
  let model: ScriptedModel;
  let scene: Scene;
  let shepherd: RpcShepherd;
  let sheep: string;

  const ok = (args: unknown) => scene.ok(args);

  /**
   * Prompts the sheep with a reply the model holds back for delayMs, waits for it in one tool call
   * and, once the sheep's request reached the model, runs the fault; returns the wait's outcome.
   */
  const waitThrough = async (tag: string, delayMs: number, fault: () => Promise<void>): Promise<{ promptId: string; outcome: ToolOutcome; item: Item }> => {
    const promptId = await scene.prompt(sheep, directive({ reply: `answer ${tag}`, delayMs, tag }));
    const [outcome] = await shepherd.callParallel([{ action: "wait", promptId, timeout: 300 }], {
      timeoutMs: 400_000,
      whileRunning: async () => {
        await untilLogged(model, tag);
        await fault();
      },
    });
    assert.equal(outcome!.isError, false, outcome!.text);
    return { promptId, outcome: outcome!, item: (outcome!.details.results as Item[])[0]! };
  };

  /** A new idle sheep on the host for each part: what an earlier part left working never blocks the next. */
  const fresh = async (label: string) => {
    sheep = ((await ok({ action: "start", agent: "echo", label, host: "box" })).details.agent as { agentId: string }).agentId;
  };

  /** Until the shepherd reaches the host again (it reconnects by itself): each part begins on a link that is up. */
  const untilReachable = async () => {
    let last = "";
    for (let i = 0; i < 60; i++) {
      const r = await shepherd.call({ action: "status", agentId: sheep });
      last = r.text;
      if (!r.isError && !/unreachable/.test(r.text) && (await remote.loggedIn()) === 1) return;
      await sleep(1_500);
    }
    assert.fail(`the shepherd never reached the host again: ${last}`);
  };

  /** The answer arrived once: completed with its text, the prompt never sent twice, a second wait says the same. */
  const arrivedOnce = async (tag: string, promptId: string, item: Item) => {
    assert.deepEqual([item.promptId, item.status, item.text], [promptId, "completed", `answer ${tag}`], JSON.stringify(item));
    assert.equal(model.log.filter((l) => l.tag === tag).length, 1, "the prompt reached the model once");
    const again = await scene.wait(promptId, 10);
    assert.deepEqual([again.status, again.text], ["completed", `answer ${tag}`]);
    assert.equal(await remote.loggedIn(), 1, "one connection again");
  };

  before(async () => {
    // Keepalives of 2 s × 3: a dead link is noticed in seconds, as a person on a flaky link would set them.
    rw = await remoteWorld("remote-faults", { host: { sshOptions: ["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3"] } });
    ({ remote } = rw);
    model = rw.world.model;
    scene = rw.world.scene();
    shepherd = scene.shepherd;
    sheep = ((await ok({ action: "start", agent: "echo", label: "steady", host: "box" })).details.agent as { agentId: string }).agentId;
  });

  after(() => rw?.world.cleanup());

  it("the link cut mid-wait and restored: the sheep went on working there, and its answer arrives once", async () => {
    await untilReachable();
    await fresh("cut");
    const { promptId, item } = await waitThrough("CUT", 15_000, async () => {
      await remote.cut();
      // Longer than ssh's keepalives give up (6 s): the connection is lost, not merely stalled.
      await sleep(15_000);
      await remote.restore();
    });
    await arrivedOnce("CUT", promptId, item);
  });

  it("while the host is unreachable, status says so and a prompt is refused [host_unreachable], never queued; restored, it works", async () => {
    await untilReachable();
    await fresh("down");
    await remote.cut();
    try {
      // Until ssh's keepalives give up on the link; status says so, it does not fail.
      let status = await shepherd.call({ action: "status", agentId: sheep });
      for (let i = 0; i < 30 && !/host unreachable since/.test(status.text); i++) {
        await sleep(1_000);
        status = await shepherd.call({ action: "status", agentId: sheep });
      }
      assert.equal(status.isError, false, status.text);
      assert.match(status.text, /host unreachable since \d{4}-\d\d-\d\dT/);
      assert.match((await ok({ action: "herd" })).text, /host unreachable since/);
      const from = model.log.length;
      await scene.fails(
        { action: "prompt", agentId: sheep, message: directive({ reply: "never", tag: "QUEUED" }) },
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
      const p = await scene.shepherd.call({ action: "prompt", agentId: sheep, message: directive({ reply: "back", tag: `BACK-${i}` }) });
      if (!p.isError) r = await scene.wait((p.details.prompt as { promptId: string }).promptId, 60);
      else await sleep(1_000);
    }
    assert.deepEqual([r?.status, r?.text], ["completed", "back"]);
    assert.doesNotMatch((await ok({ action: "status", agentId: sheep })).text, /unreachable/);
  });

  it("a wait whose deadline comes while the host is still unreachable returns timeout, not an error; waited again after, the answer", async () => {
    await untilReachable();
    await fresh("patient");
    const promptId = await scene.prompt(sheep, directive({ reply: "answer LATE", delayMs: 20_000, tag: "LATE" }));
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
    await untilReachable();
    const again = await scene.wait(promptId, 120);
    assert.deepEqual([again.status, again.text], ["completed", "answer LATE"], JSON.stringify(again));
    assert.equal(model.log.filter((l) => l.tag === "LATE").length, 1, "the prompt reached the model once");
  });

  it("delegate's results name each task's host (every result names its host)", async () => {
    await untilReachable();
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
