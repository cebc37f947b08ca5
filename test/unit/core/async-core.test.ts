/**
 * The async herd in the core, case by case: pushes and their durable marks across a reload and a
 * crash, questions and progress, replies, read state, background delegations (also cut short by
 * a reload), and a shepherd that stops writing once disposed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_QUESTIONS_PER_PUSH, PUSHES_PER_WINDOW, WINDOW_MS } from "../../../src/core/async/budget.ts";
import type { Held, Notice, Push } from "../../../src/core/async/push.ts";
import { heldText, noticeText } from "../../../src/texts/format.ts";
import { pushMessage } from "../../../src/edge/push-text.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { AnsweringFlock } from "../../support/answering-flock.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { parseAgentId, parseMessageId, parsePromptId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "worker", description: "works", source: "bundled", path: "/agents/worker.md" };

function setup() {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const store = new MemoryStore();
  const flock = new AnsweringFlock(world);
  const pushes: Push[] = [];
  const notices: Notice[] = [];
  const make = (owner: string, deliver: (p: Push) => void = (p) => pushes.push(p)) => {
    const s = new Shepherd({
      runtime: world.runtime,
      files: world.files,
      owner,
      clock,
      livenessIntervalMs: 1000,
      startTimeoutMs: 5000,
      store,
      ownerAlive: (o) => o === owner,
    });
    s.deliverTo({ deliver, notice: (n) => notices.push(n) });
    return s;
  };
  const quiet = async () => {
    await settle();
    await clock.advance(1100, 100);
    await settle();
  };
  return { world, clock, store, flock, pushes, notices, make, quiet };
}

/** A message id as the reply action parses it. */
const msg = (id: string) => parseMessageId(id, "reply");
const resultIds = (pushes: Push[]) => pushes.flatMap((p) => (p.kind === "result" ? [p.item.promptId] : []));

describe("async core: pushed results", () => {
  it("a pushed result is marked in the store first: a reload never pushes it again; a crash before the push loses nothing", async () => {
    const t = setup();
    let s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    const p1 = await s.prompt(a.agentId, "first", { notify: true });
    t.flock.answerNext(a.agentId);
    await t.quiet();
    assert.deepEqual(resultIds(t.pushes), [p1.promptId]);
    assert.equal(t.store.state.prompts.find((p) => p.promptId === p1.promptId)?.delivered?.by, "push", "the mark is on disk");

    await s.dispose();
    s = t.make("one");
    await s.attach();
    await t.quiet();
    assert.deepEqual(resultIds(t.pushes), [p1.promptId], "after a reload it is not pushed again");

    // Answered while the shepherd is down (it crashed): the next shepherd pushes it once.
    const p2 = await s.prompt(a.agentId, "second", { notify: true });
    t.store.dead.add("one");
    await s.dispose();
    t.flock.answerNext(a.agentId);
    s = t.make("two");
    await s.attach();
    await t.quiet();
    assert.deepEqual(resultIds(t.pushes), [p1.promptId, p2.promptId]);
    await s.dispose();
  });

  it("a push the conversation could not take is tried again, and goes out once", async () => {
    const t = setup();
    let refuse = true;
    const s = t.make("one", (p) => {
      if (refuse) throw new Error("pi is busy reloading");
      t.pushes.push(p);
    });
    const a = await s.start({ definition: def, cwd: "/w" });
    const p = await s.prompt(a.agentId, "x", { notify: true });
    t.flock.answerNext(a.agentId);
    await t.quiet();
    assert.deepEqual(t.pushes, []);
    assert.equal(s.registry.prompts.get(p.promptId)?.delivered, undefined, "unmarked again");
    refuse = false;
    await t.quiet();
    await t.quiet();
    assert.deepEqual(resultIds(t.pushes), [p.promptId]);
    await s.dispose();
  });

  it("a result returned by wait is not pushed; one waited for later is still returned", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    const p = await s.prompt(a.agentId, "x", { notify: true });
    const waiting = s.wait([p.promptId], { timeoutSec: 10 });
    await settle();
    t.flock.answerNext(a.agentId);
    const [item] = await waiting;
    await t.quiet();
    assert.equal(item?.text, "re:x");
    assert.deepEqual(t.pushes, []);
    assert.equal(s.registry.prompts.get(p.promptId)?.delivered?.by, "wait");
    const [again] = await s.wait([p.promptId], { timeoutSec: 0 });
    assert.deepEqual(again, item);
    await s.dispose();
  });

  it("a notified prompt whose pane went away is pushed as failed", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    const p = await s.prompt(a.agentId, "x", { notify: true });
    t.world.killPane(a.agentId);
    await t.quiet();
    await t.quiet();
    const pushed = t.pushes.find((x) => x.kind === "result" && x.item.promptId === p.promptId);
    assert.ok(pushed?.kind === "result" && pushed.item.status === "failed" && /^\[pane_gone\]/.test(pushed.item.error ?? ""));
    await s.dispose();
  });
});

describe("async core: messages from sheep", () => {
  it("progress is told to the person once; a question is pushed once; read state survives a reload", async () => {
    const t = setup();
    let s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    t.world.say(a.agentId, { messageId: "m_0000000001", kind: "progress", text: "half done" });
    t.world.say(a.agentId, { messageId: "m_0000000002", kind: "question", text: "left or right?" });
    await t.quiet();
    assert.deepEqual(
      t.notices.map((n) => n.message.text),
      ["half done"],
    );
    assert.deepEqual(
      t.pushes.map((p) => (p.kind === "question" ? p.message.messageId : p.kind)),
      ["m_0000000002"],
    );
    const listed = await s.messages(undefined, true);
    assert.deepEqual(
      listed.map((m) => [m.messageId, m.read]),
      [
        ["m_0000000001", false],
        ["m_0000000002", false],
      ],
    );
    assert.deepEqual(await s.messages(a.agentId, true), [], "listing marked them read");
    await s.dispose();
    s = t.make("one");
    await s.attach();
    await t.quiet();
    assert.deepEqual(await s.messages(undefined, true), [], "still read after a reload");
    assert.equal(t.notices.length, 1, "progress is not told again after a reload");
    assert.equal(t.pushes.length, 1, "the question is not pushed again after a reload");
    t.world.say(a.agentId, { messageId: "m_0000000003", kind: "done", text: "all in" });
    await t.quiet();
    assert.deepEqual(
      (await s.messages(a.agentId, true)).map((m) => m.messageId),
      ["m_0000000003"],
    );
    await s.dispose();
  });

  it("a message log that cannot be read after a good read changes no count: nothing is pushed or unread again", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    t.world.say(a.agentId, { messageId: "m_0000000f01", kind: "question", text: "left or right?" });
    t.world.say(a.agentId, { messageId: "m_0000000f02", kind: "progress", text: "half way" });
    await t.quiet();
    assert.equal(t.pushes.length, 1);
    assert.equal((await s.messages(a.agentId, true)).length, 2, "both read now");
    const counts = () => {
      const rec = t.store.state.agents.find((x) => x.agentId === a.agentId);
      return [rec?.messagesHandled, rec?.messagesRead];
    };
    assert.deepEqual(counts(), [2, 2]);
    // The log fails to read (a FIFO or a directory in its place), then reads short, then reads again.
    const real = t.world.files.messages;
    let mode: "throw" | "empty" | "real" = "throw";
    t.world.files.messages = async (id) => {
      if (mode === "throw") throw new Error("[messages_unreadable] not a regular file");
      return mode === "empty" ? [] : real(id);
    };
    t.world.ring(a.agentId);
    await t.quiet();
    mode = "empty";
    t.world.ring(a.agentId);
    await t.quiet();
    assert.deepEqual(await s.messages(a.agentId, true), []);
    assert.deepEqual(counts(), [2, 2], "no count went back");
    mode = "real";
    t.world.ring(a.agentId);
    await t.quiet();
    assert.equal(t.pushes.length, 1, "the question was not pushed again");
    assert.equal(t.notices.length, 1, "the progress was not told again");
    assert.deepEqual(await s.messages(a.agentId, true), [], "nothing became unread");
    await s.dispose();
  });

  it("a question that waits, seen by a wait on its sheep, comes back in that wait and is not pushed", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    const p = await s.prompt(a.agentId, "x");
    const waiting = s.wait([p.promptId], { timeoutSec: 10 });
    await settle();
    t.world.say(a.agentId, { messageId: "m_0000000009", kind: "question", text: "which gate?", awaitReply: true, timeoutSec: 60 });
    const [item] = await waiting;
    assert.equal(item?.status, "blocked");
    assert.deepEqual(item?.question, { messageId: "m_0000000009", text: "which gate?" });
    await t.quiet();
    assert.deepEqual(t.pushes, [], "the wait returned it: no push");
    await s.dispose();
  });

  it("reply: only to a question that waits, only once, never after it expired", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    t.world.say(a.agentId, { messageId: "m_000000000a", kind: "progress", text: "p" });
    t.world.say(a.agentId, { messageId: "m_000000000b", kind: "question", text: "q", awaitReply: true, timeoutSec: 60 });
    t.world.say(a.agentId, { messageId: "m_000000000c", kind: "question", text: "q2", awaitReply: true, timeoutSec: 1 });
    t.world.mem(a.agentId).replies.set("m_000000000c", { expired: true });
    await assert.rejects(s.reply(a.agentId, msg("m_000000000a"), "x"), /^ShepherdError: \[reply_refused\] message m_000000000a is a progress/);
    await assert.rejects(s.reply(a.agentId, msg("m_nothere000"), "x"), /^ShepherdError: \[unknown_message\]/);
    await assert.rejects(s.reply(a.agentId, msg("m_000000000c"), "x"), /^ShepherdError: \[reply_refused\] sheep a_\w+ stopped waiting/);
    assert.deepEqual(await s.reply(a.agentId, msg("m_000000000b"), "yes"), { agentId: a.agentId, messageId: "m_000000000b" });
    await assert.rejects(s.reply(a.agentId, msg("m_000000000b"), "again"), /^ShepherdError: \[reply_refused\] question m_000000000b was answered already/);
    assert.deepEqual(t.world.mem(a.agentId).replies.get("m_000000000b"), { text: "yes" });
    const listed = await s.messages(a.agentId);
    assert.deepEqual(
      listed.map((m) => m.answer),
      [undefined, "replied", "expired"],
    );
    await s.dispose();
  });
});

describe("async core: a flood of messages from one sheep", () => {
  const questionIds = (pushes: Push[]) => pushes.map((p) => (p.kind === "question" ? (p.messages ?? [p.message]).map((m) => m.messageId) : []));
  const id = (n: number) => `m_${String(n).padStart(10, "0")}`;

  it("40 questions of 16 KB seen in one look go out as one push listing every id, each cut; messages shows them whole", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    const text = (n: number) => `question ${n}: ${"x".repeat(16 * 1024 - 20)}`;
    for (let n = 1; n <= 40; n++) t.world.say(a.agentId, { messageId: id(n), kind: "question", text: text(n) });
    await t.quiet();
    await t.quiet();
    assert.deepEqual(questionIds(t.pushes), [Array.from({ length: 40 }, (_, i) => id(i + 1))], "one push with all 40");
    const content = pushMessage(t.pushes[0]!).content;
    assert.ok(content.length < 40 * 1024, `the push says ${content.length} characters, not 40 × 16 KB`);
    assert.match(
      content,
      /^\[pi-shepherd\] Sheep "worker" \(a_\w+\) asks 40 questions \(each cut at 500 characters; action "messages" shows them whole\):\n- m_0000000001: question 1: x{488}… \[15876 more characters\]\n/,
    );
    const listed = await s.messages(a.agentId);
    assert.deepEqual(
      listed.map((m) => m.text.length),
      Array.from({ length: 40 }, (_, i) => text(i + 1).length),
      "the full texts",
    );
    await s.dispose();
  });

  it(`a look that finds more than ${MAX_QUESTIONS_PER_PUSH} questions lists ${MAX_QUESTIONS_PER_PUSH}, says how many more, and sends the rest next`, async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    for (let n = 1; n <= 60; n++) t.world.say(a.agentId, { messageId: id(n), kind: "question", text: `q${n}`, awaitReply: true, timeoutSec: 600 });
    await t.quiet();
    await t.quiet();
    assert.deepEqual(
      questionIds(t.pushes).map((ids) => ids.length),
      [50, 10],
    );
    const first = pushMessage(t.pushes[0]!).content;
    assert.ok(first.endsWith("\n… 10 more messages from worker: see messages"), first.slice(-200));
    assert.match(first, /\n- m_0000000001 \(waits for your answer, up to 600 s\): q1\n/);
    assert.match(first, /Answer each that waits with \{"action":"reply","agentId":"a_\w+","messageId":"<its id>","text":"\.\.\."\}/);
    await s.dispose();
  });

  it(`at most ${PUSHES_PER_WINDOW} pushes per sheep a minute: the rest is held, told in one line, listed by messages, and pushed as one when the minute is over`, async () => {
    const t = setup();
    const held: Held[] = [];
    const s = t.make("one");
    s.deliverTo({ deliver: (p) => t.pushes.push(p), notice: (n) => t.notices.push(n), held: (h) => held.push(h) });
    const a = await s.start({ definition: def, cwd: "/w" });
    for (let n = 1; n <= 8; n++) {
      t.world.say(a.agentId, { messageId: id(n), kind: "question", text: `q${n}` });
      await t.quiet(); // one look each
    }
    assert.deepEqual(questionIds(t.pushes), [[id(1)], [id(2)], [id(3)]], "three pushes, then the limit");
    assert.deepEqual(held, [{ agentId: a.agentId, label: "worker", count: 1 }], "told once, when it first held one back");
    assert.equal(heldText("worker", 5), "… 5 more messages from worker: see messages");
    assert.deepEqual(
      (await s.messages(a.agentId, true)).map((m) => m.messageId),
      Array.from({ length: 8 }, (_, i) => id(i + 1)),
      "what is held back is listed by messages",
    );
    assert.equal(t.store.state.agents.find((x) => x.agentId === a.agentId)?.messagesHandled, 3, "held back: not handled");
    await t.clock.advance(WINDOW_MS, 1000);
    await t.quiet();
    assert.deepEqual(questionIds(t.pushes).slice(3), [[id(4), id(5), id(6), id(7), id(8)]], "when the window opens: one push with all held back");
    assert.equal(held.length, 1);
    await s.dispose();
  });

  it("progress and done seen in one look are one notice: the latest, with how many more", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    for (let n = 1; n <= 10; n++) t.world.say(a.agentId, { messageId: id(n), kind: "progress", text: `step ${n}` });
    t.world.say(a.agentId, { messageId: id(11), kind: "done", text: "all done" });
    await t.quiet();
    assert.deepEqual(
      t.notices.map((n) => [n.message.text, n.more]),
      [["all done", 10]],
    );
    assert.equal(noticeText(t.notices[0]!), "🐑 worker is done: all done (+10 more: see messages)");
    // Each in a look of its own: the notice budget holds the rest, told together when it opens.
    for (let n = 12; n <= 17; n++) {
      t.world.say(a.agentId, { messageId: id(n), kind: "progress", text: `step ${n}` });
      await t.quiet();
    }
    assert.deepEqual(
      t.notices.map((n) => [n.message.text, n.more]),
      [
        ["all done", 10],
        ["step 12", undefined],
        ["step 13", undefined],
      ],
    );
    await t.clock.advance(WINDOW_MS, 1000);
    await t.quiet();
    assert.deepEqual(t.notices.at(-1) && [t.notices.at(-1)!.message.text, t.notices.at(-1)!.more], ["step 17", 3]);
    assert.equal(t.notices.length, 4);
    await s.dispose();
  });
});

describe("async core: background delegations", () => {
  it("returns once the first tasks have their prompts, then pushes one message with every result in input order", async () => {
    const t = setup();
    const s = t.make("one");
    const started = await s.delegateInBackground(
      "parallel",
      [1, 2, 3].map((i) => ({ definition: def, task: `task ${i}`, cwd: "/w" })),
      { keepOpen: false, maxParallel: 2, waitTimeoutSec: 60 },
    );
    assert.match(started.delegationId, /^d_/);
    assert.deepEqual(
      started.items.map((i) => [Boolean(i.agentId), Boolean(i.promptId)]),
      [
        [true, true],
        [true, true],
        [false, false],
      ],
      "the first wave (maxParallel) is out; the third waits",
    );
    const ids = () => [...s.registry.agents.values()].filter((a) => a.state !== "closed").map((a) => a.agentId);
    // The second sheep answers first; the third starts in its place.
    t.flock.answerNext(started.items[1]!.agentId!);
    await t.quiet();
    for (const id of ids()) t.flock.answerNext(id);
    await t.quiet();
    for (const id of ids()) t.flock.answerNext(id);
    await t.quiet();
    assert.equal(t.pushes.length, 1);
    const push = t.pushes[0]!;
    assert.ok(push.kind === "delegation");
    assert.deepEqual(
      push.items.map((i) => [i.status, i.text]),
      [
        ["completed", "re:task 1"],
        ["completed", "re:task 2"],
        ["completed", "re:task 3"],
      ],
    );
    assert.deepEqual(ids(), [], "every sheep was closed");
    const record = s.registry.delegations.get(started.delegationId)!;
    assert.ok(record.delivered);
    assert.ok(
      record.items.every((i) => i.text === undefined),
      "the texts went out and are not kept",
    );
    await s.dispose();
  });

  it("a question of a background task is pushed, and the task goes on after the reply", async () => {
    const t = setup();
    const s = t.make("one");
    const started = await s.delegateInBackground("single", [{ definition: def, task: "map it", cwd: "/w" }], {
      keepOpen: false,
      maxParallel: 1,
      waitTimeoutSec: 600,
    });
    const agentId = started.items[0]!.agentId!;
    t.world.say(agentId, { messageId: "m_00000000q1", kind: "question", text: "redis or memory?", awaitReply: true, timeoutSec: 60 });
    await t.quiet();
    await t.quiet();
    assert.deepEqual(
      t.pushes.map((p) => p.kind),
      ["question"],
      "the question came to the conversation; the task is not over",
    );
    await s.reply(parseAgentId(agentId), msg("m_00000000q1"), "redis");
    t.world.stopAsking(agentId);
    t.flock.answerNext(agentId);
    await t.quiet();
    await t.quiet();
    const last = t.pushes.at(-1)!;
    assert.ok(last.kind === "delegation");
    assert.deepEqual(
      last.items.map((i) => [i.status, i.text]),
      [["completed", "re:map it"]],
    );
    await s.dispose();
  });

  it("cut short by a reload: the next shepherd finishes what ran and reports what never started as cancelled", async () => {
    const t = setup();
    let s = t.make("one");
    const started = await s.delegateInBackground(
      "parallel",
      [1, 2].map((i) => ({ definition: def, task: `task ${i}`, cwd: "/w" })),
      { keepOpen: false, maxParallel: 1, waitTimeoutSec: 60 },
    );
    await s.dispose();
    s = t.make("one");
    await s.attach();
    t.flock.answerNext(started.items[0]!.agentId!);
    await t.quiet();
    await t.quiet();
    assert.equal(t.pushes.length, 1);
    const push = t.pushes[0]!;
    assert.ok(push.kind === "delegation");
    assert.deepEqual(
      push.items.map((i) => i.status),
      ["completed", "cancelled"],
    );
    assert.match(push.items[1]!.error ?? "", /^\[cancelled\] the shepherd was reloaded or restarted before this task started/);
    assert.equal(s.registry.agents.get(started.items[0]!.agentId!)?.state, "closed", "its sheep closed, as delegate does");
    await s.dispose();
  });
});

describe("async core: disposal", () => {
  it("a disposed shepherd pushes nothing and writes nothing", async () => {
    const t = setup();
    const s = t.make("one");
    const a = await s.start({ definition: def, cwd: "/w" });
    await s.prompt(a.agentId, "x", { notify: true });
    await s.dispose();
    const before = JSON.stringify(t.store.state);
    t.flock.answerNext(a.agentId);
    await t.quiet();
    await s.wait(
      [...s.registry.prompts.keys()].map((id) => parsePromptId(id)),
      { timeoutSec: 0 },
    );
    await t.quiet();
    assert.deepEqual(t.pushes, []);
    assert.equal(JSON.stringify(t.store.state), before, "nothing written after dispose");
  });
});
