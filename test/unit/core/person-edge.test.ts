/**
 * One notion of where an action came from (issue 31, items 15–18): every audit event names its
 * edge (the model's tool, /shepherd, the panel's page, the API's token, the shepherd itself); a
 * person's prompt is answered to the person: an answer that came in before their wait is shown by
 * it, a finish nobody waits for is told to them, a question goes to them and not into the model's
 * conversation, and an answer shown to them counts as received when the shepherd quits.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { logNotice } from "../../../src/command/text.ts";
import type { PersonNote, Push } from "../../../src/core/shepherd.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AuditEvent } from "../../../src/ports/audit.ts";
import type { AgentDefinition, Edge } from "../../../src/ports/types.ts";
import { DEFAULT_SETTINGS } from "../../../src/settings.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { type EntryDeps, entryFrom, runToolCall } from "../../../src/edge/entry.ts";
import { AnsweringFlock } from "../../support/answering-flock.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup(o: { person?: boolean } = {}) {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const store = new MemoryStore();
  const flock = new AnsweringFlock(world);
  const events: AuditEvent[] = [];
  const pushes: Push[] = [];
  const notes: PersonNote[] = [];
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: "me",
    clock,
    store,
    livenessIntervalMs: 1000,
    startTimeoutMs: 5000,
    ownerAlive: (x) => x === "me",
    audit: { record: (e) => events.push(e) },
  });
  shepherd.deliverTo({ deliver: (p) => pushes.push(p), ...(o.person === false ? {} : { person: (n: PersonNote) => notes.push(n) }) });
  const ctx: DispatchContext = { shepherd, settings: DEFAULT_SETTINGS, cwd: "/repo", agentDir: "/agent", bundledDir: "/bundled", trust: { hasUI: false } };
  const tool: EntryDeps = {
    context: async () => ctx,
    doctor: async () => {
      throw new Error("no doctor here");
    },
    audit: (e) => events.push({ ...e, time: new Date(0).toISOString(), owner: "me" }),
  };
  /** A call as it comes in at that edge; the tool's own when none is named. */
  const call = (params: Record<string, unknown>, edge?: Edge) => runToolCall(params, edge ? entryFrom(tool, edge) : tool);
  const quiet = async () => {
    await settle();
    await clock.advance(1100, 100);
    await settle();
  };
  return { world, clock, store, flock, events, pushes, notes, shepherd, call, quiet };
}

describe("item 15: each audit event names the edge it came from", () => {
  it("tool, /shepherd, panel page and API token are told apart; a result names its prompt's edge; a refusal its caller's", async () => {
    const t = setup();
    await t.call({ action: "start", agent: "worker", label: "w" }).catch(() => undefined);
    const a = await t.shepherd.actingFrom("command", () => t.shepherd.start({ definition: def, cwd: "/w", label: "w" }));
    for (const edge of ["tool", "command", "panel", "api"] as const) {
      await t.call({ action: "prompt", agentId: "w", message: `from ${edge}`, deliverAs: "followUp" }, edge === "tool" ? undefined : edge);
    }
    const prompts = t.events.filter((e) => e.event === "prompt");
    assert.deepEqual(
      prompts.map((e) => e.edge),
      ["tool", "command", "panel", "api"],
    );
    assert.equal(t.events.find((e) => e.event === "start")?.edge, "command");
    // The panel's answer is its prompt's, whoever looked first (here a wait of the model).
    const panelPrompt = prompts[2]!.promptId!;
    t.flock.answerNext(a.agentId);
    t.flock.answerNext(a.agentId);
    t.flock.answerNext(a.agentId);
    await t.call({ action: "wait", promptIds: [panelPrompt], timeout: 5 });
    assert.equal(t.events.find((e) => e.event === "result" && e.promptId === panelPrompt)?.edge, "panel");
    // A refusal told by the entry names the edge of the call that was refused.
    await assert.rejects(t.call({ action: "close", agentId: "nobody" }, "api"));
    const refused = t.events.filter((e) => e.event === "refusal" || e.event === "failure").at(-1);
    assert.equal(refused?.edge, "api");
    // What nobody asked for is the shepherd's own.
    const later = new Shepherd({
      runtime: t.world.runtime,
      files: t.world.files,
      owner: "next",
      store: t.store,
      clock: t.clock,
      ownerAlive: (x) => x === "next",
      audit: { record: (e) => t.events.push(e) },
    });
    await later.attach();
    assert.ok(
      t.events.some((e) => e.event === "adopt" && e.edge === "shepherd"),
      "an adoption is the shepherd's own",
    );
    // The log says it in words.
    assert.match(logNotice(prompts), /prompt.*in the panel/);
    assert.match(logNotice(prompts), /prompt.*by the API \(token\)/);
    assert.match(logNotice(prompts), /prompt.*by you \(\/shepherd\)/);
    await later.dispose();
    await t.shepherd.dispose();
  });
});

describe("items 16–18: a person's prompt is answered to the person", () => {
  it("16: an answer that came in before the person's wait is shown by it, and by no later wait; the finish was told once", async () => {
    const t = setup();
    const a = await t.shepherd.start({ definition: def, cwd: "/w", label: "recon" });
    const p = await t.call({ action: "prompt", agentId: "recon", message: "look around" }, "command");
    const promptId = (p.details.prompt as { promptId: string }).promptId;
    t.flock.answerNext(a.agentId);
    await t.quiet();
    assert.deepEqual(t.shepherd.pending(a.agentId), [], "settled: nothing pending");
    assert.deepEqual(t.shepherd.forPerson(a.agentId), [promptId], "the person's next wait shows the answer nobody saw");
    assert.deepEqual(t.shepherd.forPerson(), [promptId], "so does a bare wait");
    assert.deepEqual(
      t.notes.map((n) => [n.kind, n.kind === "answered" ? n.promptId : ""]),
      [["answered", promptId]],
      "the finish was told to the person once",
    );
    assert.deepEqual(t.pushes, [], "nothing went into the model's conversation");
    const shown = await t.call({ action: "wait", promptIds: [promptId] }, "command");
    assert.equal((shown.details.results as { status: string }[])[0]!.status, "completed");
    assert.deepEqual(t.shepherd.forPerson(a.agentId), [], "shown once: the next wait has nothing");
    await t.quiet();
    assert.equal(t.notes.length, 1, "not told again");
    // The model's own prompt stays the model's: a person's wait does not list its answer.
    const m = await t.shepherd.prompt(a.agentId, "model's");
    await t.quiet();
    assert.equal(t.flock.answerNext(a.agentId), m.promptId);
    await t.quiet();
    await t.shepherd.refreshFromFiles();
    assert.ok(t.shepherd.registry.prompts.get(m.promptId)?.settled, "the model's prompt settled");
    assert.deepEqual(t.shepherd.forPerson(a.agentId), []);
    assert.equal(t.notes.length, 1, "a model's prompt is not announced to the person");
    assert.ok(m.promptId);
    await t.shepherd.dispose();
  });

  it("16: a finish is not told while a wait holds the prompt", async () => {
    const t = setup();
    const a = await t.shepherd.start({ definition: def, cwd: "/w", label: "recon" });
    const p = await t.shepherd.actingFrom("command", () => t.shepherd.prompt(a.agentId, "go"));
    const waiting = t.shepherd.actingFrom("command", () => t.shepherd.wait([p.promptId], { timeoutSec: 10, byPerson: true }));
    await settle();
    t.flock.answerNext(a.agentId);
    await t.quiet();
    await waiting;
    await t.quiet();
    assert.deepEqual(t.notes, [], "the wait showed it");
    await t.shepherd.dispose();
  });

  it("17: an answer shown to the person (their wait, a read) counts as received at quit; one nobody saw keeps the sheep", async () => {
    const t = setup();
    const waited = await t.shepherd.start({ definition: def, cwd: "/w", label: "waited" });
    const read = await t.shepherd.start({ definition: def, cwd: "/w", label: "read" });
    const unseen = await t.shepherd.start({ definition: def, cwd: "/w", label: "unseen" });
    const ids: Record<string, string> = {};
    for (const s of [waited, read, unseen]) {
      const r = await t.call({ action: "prompt", agentId: s.agentId, message: "work" }, "command");
      ids[s.label] = (r.details.prompt as { promptId: string }).promptId;
      t.flock.answerNext(s.agentId);
    }
    await t.quiet();
    await t.call({ action: "wait", promptIds: [ids.waited] }, "command");
    await t.call({ action: "read", target: read.agentId, source: "session" }, "panel");
    const q = await t.shepherd.quit();
    assert.deepEqual(q.closed.sort(), [waited.agentId, read.agentId].sort(), "shown answers were received: those sheep close");
    assert.deepEqual(
      q.kept.map((k) => [k.label, k.unreceived]),
      [["unseen", [ids.unseen]]],
    );
    await t.shepherd.dispose();
  });

  it("18: a question of a sheep a person prompted goes to the person, not into the model's conversation; with notify, to the model", async () => {
    const t = setup();
    const a = await t.shepherd.start({ definition: def, cwd: "/w", label: "asker" });
    const p = await t.call({ action: "prompt", agentId: "asker", message: "do it" }, "panel");
    const promptId = (p.details.prompt as { promptId: string }).promptId;
    t.world.say(a.agentId, { messageId: "m_0000000001", kind: "question", text: "left or right?", awaitReply: true, timeoutSec: 60, promptId });
    await t.quiet();
    assert.deepEqual(t.pushes, [], "the model got no turn for it");
    assert.deepEqual(
      t.notes.map((n) => (n.kind === "question" ? n.message.messageId : n.kind)),
      ["m_0000000001"],
    );
    // The model's prompt (and a person's with notify) asks the model, as before.
    const b = await t.shepherd.start({ definition: def, cwd: "/w", label: "asked" });
    const n = await t.call({ action: "prompt", agentId: "asked", message: "tell me", notify: true }, "command");
    t.world.say(b.agentId, {
      messageId: "m_0000000002",
      kind: "question",
      text: "which?",
      promptId: (n.details.prompt as { promptId: string }).promptId,
    });
    await t.quiet();
    assert.deepEqual(
      (t.pushes as Push[]).map((x) => (x.kind === "question" ? x.message.messageId : x.kind)),
      ["m_0000000002"],
    );
    await t.shepherd.dispose();
  });

  it("18: without a way to tell the person (no UI), a person's prompt's question still reaches the conversation", async () => {
    const t = setup({ person: false });
    const a = await t.shepherd.start({ definition: def, cwd: "/w", label: "asker" });
    const p = await t.call({ action: "prompt", agentId: "asker", message: "do it" }, "command");
    const promptId = (p.details.prompt as { promptId: string }).promptId;
    t.world.say(a.agentId, { messageId: "m_0000000003", kind: "question", text: "ok?", promptId });
    await t.quiet();
    assert.equal(t.pushes.length, 1);
    await t.shepherd.dispose();
  });
});
