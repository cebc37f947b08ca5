/**
 * The async herd, pushed to the shepherd: results of prompts sent with notify, background
 * delegations and a sheep's questions come into a real pi shepherd's conversation by themselves,
 * each once, also across /reload; the shepherd's reply reaches the sheep's model as its tool
 * result. Real pi shepherd over RPC, real pi sheep in tmux on a private socket, scripted model.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { type RpcShepherd, repoRoot } from "../support/rpc-shepherd.ts";
import { type Scene, tmuxPanes, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const READER = "---\nname: reader\ndescription: reads only\ntools: read\n---\nYou only read.\n";

describe("the async herd: pushed results, background delegations, questions", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let t: PrivateTmux;
  let model: ScriptedModel;
  let scene: Scene;
  let s: RpcShepherd;
  let baseline: string[];

  /** Requests of the shepherd's own model that carried a pushed message (the sheep's never do). */
  const shepherdSaw = (text: string) => model.log.filter((l) => l.lastUserText.startsWith("[pi-shepherd]") && l.lastUserText.includes(text));

  before(async () => {
    world = await e2eWorld("async-push", { agent: { agents: { "echo.md": ECHO_AGENT, "reader.md": READER } }, work: true });
    ({ tmux: t, model } = world);
    scene = world.scene({ extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
    s = scene.shepherd;
    baseline = await tmuxPanes(t.socket)();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("a notified result comes back as a new turn holding the sheep's exact text, exactly once", async () => {
    const sheep = await scene.start("pusher");
    const exact = "Pasture 7 is green. 'Quoted' ü\n  indented line";
    const r = await scene.ok({ action: "prompt", agentId: sheep.agentId, notify: true, message: directive({ reply: exact, delayMs: 1500, tag: "N1" }) });
    const { promptId } = r.details.prompt as { promptId: string };
    assert.match(r.text, /comes to you by itself/);
    // The turn that prompted is over; the result arrives later and starts a turn of its own.
    const pushed = await s.untilPush((d) => (d.item as { promptId?: string } | undefined)?.promptId === promptId);
    await s.idle();
    assert.equal(pushed.details.kind, "result");
    assert.deepEqual((pushed.details.item as { status: string; text: string }).text, exact);
    assert.match(pushed.content, new RegExp(`^\\[pi-shepherd\\] Result of ${promptId} from sheep "pusher" \\(${sheep.agentId}\\): completed\\.`));
    const seen = shepherdSaw(`Result of ${promptId}`);
    assert.equal(seen.length, 1, "the shepherd's model was asked once with the pushed result");
    assert.ok(seen[0]!.lastUserText.endsWith(exact), "its context holds the sheep's exact text");
    await sleep(2500);
    assert.equal(s.pushes().filter((m) => (m.details.item as { promptId?: string } | undefined)?.promptId === promptId).length, 1, "pushed once, never again");
    // A wait afterwards still returns the same result.
    const again = await scene.wait(promptId, 5);
    assert.deepEqual([again.status, again.text], ["completed", exact]);
    await sleep(1500);
    assert.equal(shepherdSaw(`Result of ${promptId}`).length, 1, "the wait did not make it push again");
  });

  it("a result a wait returned is not pushed", async () => {
    const sheep = await scene.start("waited");
    const { promptId } = (
      await scene.ok({ action: "prompt", agentId: sheep.agentId, notify: true, message: directive({ reply: "waited for", delayMs: 1500 }) })
    ).details.prompt as { promptId: string };
    const item = await scene.wait(promptId, 30);
    assert.deepEqual([item.status, item.text], ["completed", "waited for"]);
    await sleep(3000);
    await s.idle();
    assert.equal(s.pushes().filter((m) => (m.details.item as { promptId?: string } | undefined)?.promptId === promptId).length, 0);
    assert.equal(shepherdSaw(`Result of ${promptId}`).length, 0);
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("a notified result that lands during /reload is delivered once, after it", async () => {
    const sheep = await scene.start("reloaded");
    const { promptId } = (
      await scene.ok({
        action: "prompt",
        agentId: sheep.agentId,
        notify: true,
        message: directive({ reply: "landed while reloading", delayMs: 1500, tag: "R1" }),
      })
    ).details.prompt as { promptId: string };
    const reattached = s.next((e) => e.type === "extension_ui_request" && e.method === "notify" && /re-attached/.test(String(e.message)), 60_000);
    const reloadStarted = Date.now();
    // Held 5 s between the old shepherd's shutdown and the new one's start: the answer lands then.
    const reload = s.command({ type: "prompt", message: "/test-reload 5000" });
    await reattached;
    const reattachedAt = Date.now();
    await reload;
    const answer = model.log.find((l) => l.tag === "R1");
    assert.ok(answer?.lastByteAt && answer.lastByteAt > reloadStarted && answer.lastByteAt < reattachedAt, "the sheep answered while no shepherd was loaded");
    const pushed = await s.untilPush((d) => (d.item as { promptId?: string } | undefined)?.promptId === promptId);
    assert.equal((pushed.details.item as { text: string }).text, "landed while reloading");
    await s.idle();
    await sleep(2000);
    assert.equal(s.pushes().filter((m) => (m.details.item as { promptId?: string } | undefined)?.promptId === promptId).length, 1, "once, after the reload");
    assert.equal(shepherdSaw(`Result of ${promptId}`).length, 1);
  });

  it("delegate with background returns before any sheep answers, then one message brings every result in input order", async () => {
    const before = s.pushes().length;
    const tasks = [
      { agent: "echo", task: directive({ reply: "slow one", delayMs: 2500, tag: "B1" }) },
      { agent: "echo", task: directive({ reply: "fast two", delayMs: 500, tag: "B2" }) },
    ];
    const r = await scene.ok({ action: "delegate", tasks, background: true });
    const returnedAt = Date.now();
    const items = r.details.items as { agentId?: string; promptId?: string }[];
    assert.equal(r.details.background, true);
    assert.match(String(r.details.delegationId), /^d_[0-9a-z]{10}$/);
    assert.ok(
      items.every((i) => /^a_/.test(i.agentId ?? "") && /^p_/.test(i.promptId ?? "")),
      "it returns with every sheep and prompt id",
    );
    const answered = model.log.filter((l) => l.tag === "B1" || l.tag === "B2");
    assert.ok(
      answered.every((l) => l.lastByteAt === undefined || l.lastByteAt > returnedAt - 50),
      "no sheep had answered when the call returned",
    );
    const pushed = await s.untilPush((d) => d.delegationId === r.details.delegationId, 60_000);
    await s.idle();
    const results = pushed.details.items as { status: string; text: string; promptId: string }[];
    assert.deepEqual(
      results.map((i) => [i.status, i.text]),
      [
        ["completed", "slow one"],
        ["completed", "fast two"],
      ],
      "input order, not the order they finished",
    );
    assert.deepEqual(
      results.map((i) => i.promptId),
      items.map((i) => i.promptId),
    );
    assert.equal(s.pushes().length, before + 1, "one message for the whole delegation");
    assert.match(pushed.content, /Background parallel delegation d_\w+ is done\.[\s\S]*Parallel: 2\/2 succeeded\.[\s\S]*slow one[\s\S]*fast two/);
    assert.equal(shepherdSaw(String(r.details.delegationId)).length, 1);
    for (const i of items) assert.equal((await scene.state(i.agentId!)).state, "closed", "its sheep were closed, as delegate does");
  });

  it("a sheep's question reaches the shepherd's model, whose reply becomes the sheep's tool result; read state survives /reload", async () => {
    const sheep = await scene.start("asker", { agent: "reader" });
    const ask = directive({
      tools: [
        { name: "shepherd_message", arguments: { kind: "progress", text: "Counted 40 sheep so far" } },
        { name: "shepherd_message", arguments: { kind: "question", text: "Which pasture, north or south?", awaitReply: true, timeout: 120 } },
      ],
      tag: "Q1",
    });
    const { promptId } = (await scene.ok({ action: "prompt", agentId: sheep.agentId, notify: true, message: ask })).details.prompt as { promptId: string };
    await untilLogged(model, "Q1");
    assert.ok(model.log.find((l) => l.tag === "Q1")!.toolNames.includes("shepherd_message"), "a sheep with a tool list still has the message tool");
    const question = await s.untilPush((d) => d.kind === "question" && d.agentId === sheep.agentId);
    await s.idle();
    const m = question.details.message as { messageId: string; text: string; awaitReply: boolean };
    assert.deepEqual([m.text, m.awaitReply], ["Which pasture, north or south?", true]);
    assert.equal(shepherdSaw("Which pasture, north or south?").length, 1, "the shepherd's model saw the question");
    const progress = await s.until(
      (e) => e.type === "extension_ui_request" && e.method === "notify" && /asker reports: Counted 40 sheep so far/.test(String(e.message)),
    );
    assert.ok(progress);
    // A wait on the asking sheep's prompt returns blocked, with the question.
    const blocked = await scene.wait(promptId, 5);
    assert.equal(blocked.status, "blocked");
    assert.match(blocked.error ?? "", /question m_\w+ to the shepherd: Which pasture/);

    const listed = await scene.ok({ action: "messages", agentId: sheep.agentId });
    const list = listed.details.messages as { messageId: string; kind: string; read: boolean }[];
    assert.deepEqual(list.map((x) => [x.kind, x.read]).sort(), [
      ["progress", false],
      ["question", false],
    ]);
    assert.match(listed.text, /waits for a reply/);
    assert.deepEqual((await scene.ok({ action: "messages", unreadOnly: true })).details.messages, [], "listing marked them read");

    const replied = await scene.ok({ action: "reply", agentId: sheep.agentId, messageId: m.messageId, text: "North, by the river." });
    assert.match(replied.text, /^Replied to m_\w+ of asker/);
    await scene.fails(
      { action: "reply", agentId: sheep.agentId, messageId: m.messageId, text: "again" },
      /^\[reply_refused\] question m_\w+ was answered already/,
    );
    const result = await s.untilPush((d) => (d.item as { promptId?: string } | undefined)?.promptId === promptId, 60_000);
    await s.idle();
    const followup = model.log.find((l) => l.tag === "Q1" && l.kind === "tool-followup");
    assert.ok(followup, "the sheep's model got its tool results");
    assert.match(followup.replyText ?? "", /The shepherd replied:\nNorth, by the river\./);
    assert.match((result.details.item as { text: string }).text, /North, by the river\./);

    const reattached = s.next((e) => e.type === "extension_ui_request" && e.method === "notify" && /re-attached/.test(String(e.message)), 60_000);
    await s.command({ type: "prompt", message: "/test-reload" });
    await reattached;
    assert.deepEqual((await scene.ok({ action: "messages", unreadOnly: true })).details.messages, [], "read state survived the reload");
    const after = (await scene.ok({ action: "messages", agentId: sheep.agentId })).details.messages as { read: boolean; answer?: string; kind: string }[];
    assert.ok(after.every((x) => x.read));
    assert.equal(after.find((x) => x.kind === "question")?.answer, "replied");
    // The same, for a person: /shepherd messages and reply run the same actions.
    const [listing] = await s.slash("/shepherd messages asker");
    assert.match(
      listing!.text,
      /^asker \(a_\w+\):\n {2}m_\w+ · progress · [^\n]* · read[\s\S]* · question · [^\n]* · read, during p_\w+, answered\n {4}Which pasture, north or south\?/,
    );
    const [refused] = await s.slash(`/shepherd reply asker ${m.messageId} South after all`);
    assert.deepEqual([refused!.level, refused!.text.split(" ")[0]], ["error", "[reply_refused]"]);
    await sleep(1500);
    assert.equal(s.pushes().filter((x) => x.details.kind === "question").length, 1, "the question was not pushed again after the reload");
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("a sheep that asks 40 questions of 16 KB in one turn costs a few pushes and shepherd turns, not 40; every question still comes", async () => {
    const sheep = await scene.start("flood", { agent: "reader" });
    const count = 40;
    const flood = directive({
      tools: Array.from({ length: count }, (_, i) => ({
        name: "shepherd_message",
        arguments: { kind: "question", text: `Flood question ${i + 1}: ${"q".repeat(16 * 1024 - 40)}` },
      })),
      tag: "F1",
    });
    const before = s.pushes().length;
    const fromFlood = () => s.pushes().filter((m) => m.details.kind === "question" && m.details.agentId === sheep.agentId);
    const idsOf = (m: { details: Record<string, unknown> }) =>
      ((m.details.messages as { messageId: string }[] | undefined) ?? [m.details.message as { messageId: string }]).map((x) => x.messageId);
    await scene.ok({ action: "prompt", agentId: sheep.agentId, message: flood });
    await untilLogged(model, "F1");
    // Every question comes, within the rate limit's minute for what it held back.
    await s.until(() => new Set(fromFlood().flatMap(idsOf)).size === count, 180_000);
    await s.idle(120_000);
    const pushes = fromFlood();
    const ids = pushes.flatMap(idsOf);
    assert.equal(ids.length, count, "no question pushed twice");
    assert.ok(pushes.length <= 4, `${pushes.length} pushes for one turn's ${count} questions (3 a minute, then what was held, in one)`);
    const chars = pushes.reduce((n, m) => n + m.content.length, 0);
    assert.ok(chars < 100_000, `${chars} characters pushed (each question is cut; messages shows it whole)`);
    const turns = model.log.filter((l) => l.lastUserText.startsWith(`[pi-shepherd] Sheep "flood"`));
    assert.ok(turns.length <= pushes.length, `${turns.length} shepherd model requests for ${pushes.length} pushes`);
    assert.equal(s.pushes().length - before, pushes.length, "nothing else was pushed");
    const listed = (await scene.ok({ action: "messages", agentId: sheep.agentId })).details.messages as { messageId: string; text: string }[];
    assert.equal(listed.length, count);
    assert.ok(
      listed.every((x) => x.text.length > 16_000),
      "messages has every question whole",
    );
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("leaves nothing behind", async () => {
    for (const a of (await scene.ok({ action: "herd" })).details.agents as { agentId: string }[]) await scene.ok({ action: "close", agentId: a.agentId });
    await scene.assertNothingLeft(tmuxPanes(t.socket), baseline);
  });
});
