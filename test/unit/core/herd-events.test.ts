/**
 * The core publishes one typed event where it learns what a person who walked away must hear
 * (issue 35): a question, a dialog the sheep waits on, a prompt that failed, a sheep that died, an
 * answer nobody received. Each with a key that stays the same however often it is seen; a close
 * of the shepherd's own is no failure.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { HerdEvent } from "../../../src/ports/events.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { AnsweringFlock } from "../../support/answering-flock.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "works", source: "bundled", path: "/agents/worker.md" };

function setup(person = false) {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const events: HerdEvent[] = [];
  const s = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: "one",
    clock,
    livenessIntervalMs: 1000,
    startTimeoutMs: 5000,
    store: new MemoryStore(),
    ownerAlive: (o) => o === "one",
    events: (e) => events.push(e),
  });
  s.deliverTo({ deliver: () => undefined, ...(person ? { person: () => undefined } : {}) });
  const quiet = async () => {
    await settle();
    await clock.advance(1100, 100);
    await settle();
  };
  return { world, clock, s, events, quiet, flock: new AnsweringFlock(world) };
}

const keys = (events: HerdEvent[], kind: HerdEvent["kind"]) => [...new Set(events.filter((e) => e.kind === kind).map((e) => e.key))];

describe("the herd's events", () => {
  it("a question: published by its message id, with the sheep, its host and its words", async () => {
    const t = setup();
    const a = await t.s.start({ definition: def, cwd: "/w", label: "scout" });
    await t.s.prompt(a.agentId, "go", { notify: true });
    t.world.say(a.agentId, { messageId: "m_0000000002", kind: "question", text: "left or right?" });
    await t.quiet();
    await t.quiet();
    assert.deepEqual(keys(t.events, "question"), ["question:m_0000000002"]);
    const q = t.events.find((e) => e.kind === "question")!;
    assert.deepEqual(
      { agentId: q.agentId, label: q.label, host: q.host, text: q.text, messageId: q.messageId },
      { agentId: a.agentId, label: "scout", host: "local", text: "left or right?", messageId: "m_0000000002" },
    );
  });

  it("a dialog the sheep waits on: blocked", async () => {
    const t = setup();
    const a = await t.s.start({ definition: def, cwd: "/w" });
    const p = await t.s.prompt(a.agentId, "go", { notify: true });
    t.world.sheep.get(a.agentId)!.snapshot.blocked = "Allow bash: rm -rf build?";
    t.world.ring(a.agentId);
    await t.quiet();
    assert.deepEqual(keys(t.events, "blocked"), [`blocked:${a.agentId}:${p.promptId}:Allow bash: rm -rf build?`]);
    assert.match(t.events.find((e) => e.kind === "blocked")!.text, /^Allow bash/, "the dialog's own words: the notice says it waits on a dialog");
  });

  it("a prompt that failed, and a sheep whose pane went: failed", async () => {
    const t = setup();
    const a = await t.s.start({ definition: def, cwd: "/w" });
    const p = await t.s.prompt(a.agentId, "go", { notify: true });
    t.world.answer(a.agentId, p.promptId, "", "failed", "model overloaded");
    await t.quiet();
    assert.deepEqual(keys(t.events, "failed"), [`failed:${p.promptId}`]);

    const b = await t.s.start({ definition: def, cwd: "/w" });
    const q = await t.s.prompt(b.agentId, "go", { notify: true });
    t.world.killPane(b.agentId);
    await t.quiet();
    await t.quiet();
    assert.ok(keys(t.events, "failed").includes(`failed:${q.promptId}`));
    assert.match(t.events.find((e) => e.key === `failed:${q.promptId}`)!.text, /pane_gone|pi_exited/);
  });

  it("an idle sheep whose pane went: failed, once by its id", async () => {
    const t = setup();
    const a = await t.s.start({ definition: def, cwd: "/w", label: "idler" });
    t.world.killPane(a.agentId);
    await t.s.status(a.agentId);
    await t.s.status(a.agentId);
    assert.deepEqual(keys(t.events, "failed"), [`exited:${a.agentId}`]);
    assert.equal(t.events.filter((e) => e.kind === "failed").length, 1, "seen twice, published once");
  });

  it("a sheep the shepherd closes is no failure", async () => {
    const t = setup();
    const a = await t.s.start({ definition: def, cwd: "/w" });
    await t.s.close(a.agentId);
    await t.s.status(a.agentId).catch(() => undefined);
    await t.quiet();
    assert.deepEqual(keys(t.events, "failed"), []);
  });

  it("a person's prompt answered while nobody waited: an answer nobody received", async () => {
    const t = setup(true);
    const a = await t.s.start({ definition: def, cwd: "/w" });
    const p = await t.s.actingFrom("command", () => t.s.prompt(a.agentId, "go"));
    t.flock.answerNext(a.agentId);
    await t.quiet();
    await t.quiet();
    assert.deepEqual(keys(t.events, "answer"), [`answer:${p.promptId}`]);
  });

  it("a sink that throws costs the herd nothing", async () => {
    const world = new MemoryWorld();
    const clock = new FakeClock();
    const s = new Shepherd({
      runtime: world.runtime,
      files: world.files,
      owner: "one",
      clock,
      store: new MemoryStore(),
      ownerAlive: () => true,
      events: () => {
        throw new Error("disk full");
      },
    });
    const a = await s.start({ definition: def, cwd: "/w" });
    const p = await s.prompt(a.agentId, "go");
    world.answer(a.agentId, p.promptId, "", "failed", "boom");
    const r = s.wait([p.promptId], { timeoutSec: 5 });
    await clock.advance(2000, 100);
    assert.equal((await r)[0]!.status, "failed");
  });

  it("a budget's warning and limit: published as budget, one key per sheep and kind, the day's per day", async () => {
    const { s, events } = setup();
    const started = await s.start({ definition: def, cwd: "/w", label: "w1", budget: { key: "b_test", budget: { tokens: 100 } } });
    const rec = s.registry.agents.get(started.agentId)!;
    s.spend.note(rec, { tokens: 90, outputTokens: 10, costUsd: 0 });
    s.spend.exceeded(rec);
    s.spend.exceeded(rec);
    const budget = events.filter((e) => e.kind === "budget");
    assert.deepEqual([...new Set(budget.map((e) => e.key))], [`budget:budget-warning:${started.agentId}`, `budget:budget-exceeded:${started.agentId}`]);
    assert.equal(budget[0]!.agentId, started.agentId);
    assert.equal(budget[0]!.label, "w1");
    assert.match(budget[0]!.text, /its budget is at its warning line: spent 90/);
    assert.match(budget.at(-1)!.text, /its budget is at its limit/);
  });
});
