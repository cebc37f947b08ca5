/**
 * Talking to a working sheep without waiting for it: steering its running turn, queueing
 * follow-ups that are answered in order (and refused past the limit), and idempotent prompts
 * whose requestId holds across a shepherd crash. Real pi shepherd over RPC, real pi sheep in tmux
 * on a private socket, scripted model.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { RpcShepherd } from "../support/rpc-shepherd.ts";
import { type Scene, tmuxPanes, untilLogged, type Item } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

describe("the async herd: steering, follow-ups, idempotent prompts", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let t: PrivateTmux;
  let model: ScriptedModel;
  let scene: Scene;
  let baseline: string[];

  before(async () => {
    world = await e2eWorld("async-steer", { work: true });
    ({ tmux: t, model } = world);
    scene = world.scene();
    baseline = await tmuxPanes(t.socket)();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("steer reaches the running turn: the sheep's model sees it in the same run, before its final answer", async () => {
    const sheep = await scene.start("steered");
    const promptId = await scene.prompt(sheep.agentId, directive({ reply: "first draft", delayMs: 2500, tag: "S1" }));
    await untilLogged(model, "S1");
    const r = await scene.ok({ action: "prompt", agentId: sheep.agentId, deliverAs: "steer", message: directive({ reply: "steered answer", tag: "S2" }) });
    const submitted = r.details.prompt as { promptId: string; deliverAs: string; steerId: string };
    assert.deepEqual([submitted.promptId, submitted.deliverAs], [promptId, "steer"], "the answer comes on the active prompt");
    assert.match(submitted.steerId, /^s_[0-9a-z]{10}$/);
    const item = (await scene.ok({ action: "wait", promptId, timeout: 60 })).details.results as (Item & { steered?: number })[];
    assert.deepEqual([item[0]!.status, item[0]!.text, item[0]!.steered], ["completed", "steered answer", 1]);
    const first = model.log.find((l) => l.tag === "S1")!;
    const steer = model.log.find((l) => l.tag === "S2")!;
    assert.ok(steer.receivedAt >= first.lastByteAt!, "the steer was asked after the first answer streamed");
    assert.ok(steer.messageCount > first.messageCount, "in the same conversation, with the first draft in it");
    assert.equal(model.log.filter((l) => l.tag === "S1" || l.tag === "S2").length, 2, "each reached the model once");
    // Steering an idle sheep is a plain prompt: nothing runs to steer.
    const plain = (await scene.ok({ action: "prompt", agentId: sheep.agentId, deliverAs: "steer", message: directive({ reply: "plain" }) })).details.prompt as {
      promptId: string;
      deliverAs?: string;
    };
    assert.equal(plain.deliverAs, undefined);
    assert.equal((await scene.wait(plain.promptId, 30)).text, "plain");
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("follow-ups are answered in order; without deliverAs a busy sheep refuses; the ninth queued one is refused", async () => {
    const sheep = await scene.start("queued");
    const p1 = await scene.prompt(sheep.agentId, directive({ reply: "one", delayMs: 1500, tag: "F1" }));
    await scene.fails({ action: "prompt", agentId: sheep.agentId, message: "not now" }, /^\[prompt_pending\] .*deliverAs "steer".*"followUp"/);
    const follow = async (reply: string, tag: string) =>
      (await scene.ok({ action: "prompt", agentId: sheep.agentId, deliverAs: "followUp", message: directive({ reply, tag }) })).details.prompt as {
        promptId: string;
        queuedBehind: string[];
      };
    const p2 = await follow("two", "F2");
    const p3 = await follow("three", "F3");
    assert.deepEqual(p3.queuedBehind, [p1, p2.promptId]);
    const results = (await scene.ok({ action: "wait", promptIds: [p1, p2.promptId, p3.promptId], timeout: 60 })).details.results as Item[];
    assert.deepEqual(
      results.map((r) => [r.status, r.text]),
      [
        ["completed", "one"],
        ["completed", "two"],
        ["completed", "three"],
      ],
    );
    const asked = ["F1", "F2", "F3"].map((tag) => model.log.find((l) => l.tag === tag)!);
    assert.ok(asked[1]!.receivedAt >= asked[0]!.lastByteAt! && asked[2]!.receivedAt >= asked[1]!.lastByteAt!, "answered one after the other, in order");

    const busy = await scene.prompt(sheep.agentId, directive({ reply: "long", delayMs: 60_000, tag: "L0" }));
    const queued: string[] = [];
    for (let i = 1; i <= 8; i++) queued.push((await follow(`q${i}`, `Q${i}`)).promptId);
    await scene.fails(
      { action: "prompt", agentId: sheep.agentId, deliverAs: "followUp", message: "ninth" },
      /^\[queue_full\] sheep a_\w+ \(queued\) already has 8 follow-ups queued behind p_\w+; wait for some of them first\./,
    );
    const st = await scene.state(sheep.agentId);
    assert.equal(st.activePromptId, busy);
    const closed = (await scene.ok({ action: "close", agentId: sheep.agentId })).details.closed as { cancelledPromptIds: string[] };
    assert.deepEqual(closed.cancelledPromptIds, [busy, ...queued], "closing cancels the active prompt and the queue");
    assert.equal(model.log.filter((l) => /^Q\d$/.test(l.tag ?? "")).length, 0, "no queued prompt reached the model");
  });

  it("a repeated requestId is the same prompt, seen once by the sheep's model, also after a shepherd crash", async () => {
    const first = scene.shepherd;
    const sheep = await scene.start("idempotent");
    const send = (s: RpcShepherd) =>
      s.ok({ action: "prompt", agentId: sheep.agentId, requestId: "feed-the-flock", message: directive({ reply: "fed", delayMs: 2000, tag: "I1" }) });
    const a = (await send(first)).details.prompt as { promptId: string; duplicate?: boolean };
    const b = (await send(first)).details.prompt as { promptId: string; duplicate?: boolean };
    assert.equal(b.promptId, a.promptId);
    assert.deepEqual([a.duplicate, b.duplicate], [undefined, true]);
    first.proc.kill("SIGKILL"); // a crash: nothing is closed, nothing more is written
    await first.proc;
    const second = world!.shepherd();
    const reattached = second.next((e) => e.type === "extension_ui_request" && e.method === "notify" && /re-attached 1 sheep/.test(String(e.message)), 60_000);
    await second.command({ type: "get_state" });
    await reattached;
    const c = (await send(second)).details.prompt as { promptId: string; duplicate?: boolean };
    assert.deepEqual([c.promptId, c.duplicate], [a.promptId, true], "the new shepherd knows the requestId");
    const [r] = (await second.ok({ action: "wait", promptId: a.promptId, timeout: 60 })).details.results as Item[];
    assert.deepEqual([r!.status, r!.text], ["completed", "fed"]);
    assert.equal(model.log.filter((l) => l.tag === "I1").length, 1, "the sheep's model saw the prompt once");
    // The same requestId after the answer is still that prompt; another requestId is a new one.
    assert.equal(((await send(second)).details.prompt as { promptId: string }).promptId, a.promptId);
    const other = (await second.ok({ action: "prompt", agentId: sheep.agentId, requestId: "water-them", message: directive({ reply: "watered" }) })).details
      .prompt as { promptId: string };
    assert.notEqual(other.promptId, a.promptId);
    await second.ok({ action: "wait", promptId: other.promptId, timeout: 30 });
    await second.ok({ action: "close", agentId: sheep.agentId });
    await scene.assertNothingLeft(tmuxPanes(t.socket), baseline);
  });
});
