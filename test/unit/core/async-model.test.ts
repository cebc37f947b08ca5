/**
 * Random sequences of the async herd against the core: prompts with notify, steer, followUp and
 * requestId, sheep answering in their own time, questions and replies, waits, closes, reloads and
 * crashes of the shepherd. After every step, and once everything is drained at the end, what
 * must hold is checked: a pushed result is pushed once and never after a wait returned it, every
 * notified result reaches the conversation exactly once, a requestId is one prompt, a sheep gets
 * each prompt once and answers follow-ups in order, a queue never passes its limit.
 *
 * Seeded: PI_SHEPHERD_SEED replays one run (a new seed each run otherwise, shown in the test
 * name); PI_SHEPHERD_RUNS sets the number of runs. The commands are self-contained (a model, a
 * real Shepherd over the in-memory world, an answering flock), so they can join the main
 * model-based test's command list.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Push } from "../../../src/core/async/courier.ts";
import { MAX_QUEUED, Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition, DeliverAs, WaitItem } from "../../../src/ports/types.ts";
import { AnsweringFlock } from "../../support/answering-flock.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { parseAgentId, parseMessageId, parsePromptId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "worker", description: "works", source: "bundled", path: "/agents/worker.md" };
const SEED = process.env.PI_SHEPHERD_SEED ? Number(process.env.PI_SHEPHERD_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
const RUNS = Number(process.env.PI_SHEPHERD_RUNS ?? 60);

interface PromptModel {
  agentId: string;
  text: string;
  notify: boolean;
  /** A wait returned it final before any push did: it must never be pushed. */
  claimedByWait: boolean;
  /** Its sheep was let go (closed, and its shepherd crashed): its id is unknown from now on. */
  dropped?: boolean;
  final?: WaitItem;
}

export interface AsyncModel {
  sheep: string[];
  closed: Set<string>;
  prompts: Map<string, PromptModel>;
  requestIds: Map<string, string>;
  questions: Map<string, { agentId: string; awaitReply: boolean }>;
  counter: number;
}

export interface AsyncReal {
  world: MemoryWorld;
  flock: AnsweringFlock;
  clock: FakeClock;
  store: MemoryStore;
  shepherd: Shepherd;
  owner: string;
  generation: number;
  pushes: Push[];
  trace: string[];
}

type Cmd = fc.AsyncCommand<AsyncModel, AsyncReal>;

function codeOf(e: unknown): string {
  return /^\[(\w+)\]/.exec(e instanceof Error ? e.message : String(e))?.[1] ?? `uncoded: ${String(e)}`;
}

function shepherdFor(r: AsyncReal): Shepherd {
  const owner = r.owner;
  const s = new Shepherd({
    runtime: r.world.runtime,
    files: r.world.files,
    owner,
    clock: r.clock,
    livenessIntervalMs: 1000,
    startTimeoutMs: 5000,
    store: r.store,
    ownerAlive: (o) => o === owner,
  });
  return s;
}

/** Lets every background loop (the courier, settles it rang) run to its next real wait. */
async function quiet(r: AsyncReal): Promise<void> {
  await settle();
  await r.clock.advance(1100, 100);
  await settle();
}

function resultPushes(r: AsyncReal): string[] {
  return r.pushes.flatMap((p) => (p.kind === "result" ? [p.item.promptId] : []));
}

async function check(m: AsyncModel, r: AsyncReal): Promise<void> {
  const pushed = resultPushes(r);
  assert.equal(new Set(pushed).size, pushed.length, `a result was pushed twice: ${pushed.join(", ")}`);
  for (const id of pushed) {
    const p = m.prompts.get(id);
    assert.ok(p?.notify, `${id} was pushed but never asked to notify`);
    assert.ok(!p.claimedByWait, `${id} was pushed after a wait had returned it`);
  }
  const questions = r.pushes.flatMap((p) => (p.kind === "question" ? (p.messages ?? [p.message]).map((m) => m.messageId) : []));
  assert.equal(new Set(questions).size, questions.length, "a question was pushed twice");
  for (const agentId of m.sheep) {
    const delivered = r.world.mem(agentId).deliveries.flatMap((d) => (d.kind === "prompt" ? [d.promptId] : []));
    assert.equal(new Set(delivered).size, delivered.length, `the shepherd delivered a prompt to ${agentId} twice`);
    const submitted = r.flock.submitted(agentId);
    assert.equal(new Set(submitted).size, submitted.length, `${agentId} submitted a prompt twice`);
    const rec = r.shepherd.registry.agents.get(agentId);
    assert.ok((rec?.queue?.length ?? 0) <= MAX_QUEUED, `${agentId} holds ${rec?.queue?.length} queued prompts`);
    if (!rec || rec.state === "closed") continue;
    // Once it has read the sheep's files, the shepherd's active prompt is the one the sheep runs.
    const status = await r.shepherd.status(parseAgentId(agentId));
    assert.equal(status.activePromptId, r.flock.running(agentId)?.promptId, `${agentId}: the shepherd and the sheep disagree on what runs`);
  }
  for (const [id, p] of m.prompts) {
    if (p.dropped) continue;
    const settled = r.shepherd.registry.prompts.get(id)?.settled;
    if (p.final && settled) assert.deepEqual(settled, p.final, `the result of ${id} changed`);
    // Each prompt gets its own answer: a follow-up never takes another's.
    if (settled?.status !== "completed") continue;
    assert.equal(settled.text, `re:${p.text}`, `${id} got someone else's answer`);
    // Its result counts the steers that reached its turn, and those that came too late.
    const sent = r.shepherd.registry.prompts.get(id)?.steerIds?.length ?? 0;
    const got = r.world.mem(p.agentId).outbox.get(id)?.steered?.length ?? 0;
    assert.deepEqual([settled.steered ?? 0, settled.steersMissed ?? 0], [got, sent - got], `${id}: steers counted wrong`);
  }
}

function command(name: string, body: (m: AsyncModel, r: AsyncReal) => Promise<void>): Cmd {
  return {
    check: () => true,
    async run(m, r) {
      r.trace.push(name);
      try {
        await body(m, r);
        await quiet(r);
        await check(m, r);
      } catch (e) {
        throw new Error(`${name}: ${e instanceof Error ? e.message : String(e)}\nsteps:\n  ${r.trace.join("\n  ")}`);
      }
    },
    toString: () => name,
  };
}

const pickOf = <T>(xs: readonly T[], k: number): T | undefined => (xs.length ? xs[k % xs.length] : undefined);

// --- commands --------------------------------------------------------------------------------

export const startCmd = () =>
  command("start", async (m, r) => {
    const a = await r.shepherd.start({ definition: def, cwd: "/work" });
    m.sheep.push(a.agentId);
  });

export const promptCmd = (k: number, notify: boolean, deliverAs: DeliverAs | undefined, requestId: string | undefined) =>
  command(`prompt(#${k}, notify=${notify}, deliverAs=${deliverAs ?? "-"}, requestId=${requestId ?? "-"})`, async (m, r) => {
    const agentId = pickOf(m.sheep, k);
    if (!agentId) return;
    const known = requestId === undefined ? undefined : m.requestIds.get(`${agentId}|${requestId}`);
    const rec = r.shepherd.registry.agents.get(agentId);
    const pendingBefore = rec ? [rec.activePromptId, ...(rec.queue ?? [])].filter((id) => id && !r.shepherd.registry.prompts.get(id)?.settled).length : 0;
    const deliveriesBefore = r.world.mem(agentId).deliveries.length;
    const text = `m${++m.counter}`;
    try {
      const p = await r.shepherd.prompt(parseAgentId(agentId), text, { notify, ...(deliverAs ? { deliverAs } : {}), ...(requestId ? { requestId } : {}) });
      if (known) {
        assert.equal(p.duplicate, true, "a known requestId is a duplicate");
        assert.equal(p.promptId, known, "a known requestId returns its first prompt");
        assert.equal(r.world.mem(agentId).deliveries.length, deliveriesBefore, "a duplicate sends nothing");
        return;
      }
      assert.ok(!m.closed.has(agentId), "a closed sheep took a prompt");
      if (p.deliverAs === "steer") {
        assert.ok(m.prompts.has(p.promptId), "a steer names a prompt we know");
        if (notify) m.prompts.get(p.promptId)!.notify = true;
      } else {
        if (pendingBefore > 0) assert.equal(p.deliverAs, "followUp", "a prompt to a busy sheep is queued");
        m.prompts.set(p.promptId, { agentId, text, notify, claimedByWait: false });
      }
      if (requestId) m.requestIds.set(`${agentId}|${requestId}`, p.promptId);
    } catch (e) {
      const code = codeOf(e);
      assert.ok(!known, `a known requestId failed: ${String(e)}`);
      if (code === "agent_closed") assert.ok(m.closed.has(agentId) || r.shepherd.registry.agents.get(agentId)?.state === "exited");
      else if (code === "prompt_pending") assert.ok(pendingBefore > 0 && deliverAs === undefined, `refused as pending: ${String(e)}`);
      else if (code === "queue_full") assert.ok(deliverAs === "followUp" && pendingBefore > MAX_QUEUED, `refused as full with ${pendingBefore} pending`);
      else assert.fail(`prompt failed: ${String(e)}`);
    }
  });

export const answerCmd = (k: number) =>
  command(`answer(#${k})`, async (m, r) => {
    const agentId = pickOf(m.sheep, k);
    if (agentId && !m.closed.has(agentId)) r.flock.answerNext(agentId);
  });

export const waitCmd = (k: number) =>
  command(`wait(#${k})`, async (m, r) => {
    const id = pickOf(
      [...m.prompts].filter(([, p]) => !p.dropped).map(([id]) => id),
      k,
    );
    if (!id) return;
    const p = m.prompts.get(id)!;
    const pushedBefore = resultPushes(r).includes(id);
    const [item] = await r.shepherd.wait([parsePromptId(id)], { timeoutSec: 0 });
    if (!item || !["completed", "failed", "cancelled"].includes(item.status)) return;
    if (p.final) assert.deepEqual(item, p.final, "a wait returned another result than before");
    p.final = item;
    if (!pushedBefore && p.notify) p.claimedByWait = true;
  });

/**
 * A sheep answers while a wait watches its prompt: the wait returns the result, and nothing pushes
 * it meanwhile or after. With `late`, the answer lands before the wait looks (in the same step,
 * before the courier could see it); with `widget`, the wait is stuck in a slow multiplexer call
 * while the widget's refresh reads the answer (settling the prompt), so the courier sees it first.
 */
export const answerWhileWaitingCmd = (k: number, late: boolean, widget: boolean) =>
  command(`answer while waiting(#${k}${late ? ", answered first" : ""}${widget ? ", widget first" : ""})`, async (m, r) => {
    const agentId = pickOf(m.sheep, k);
    const running = agentId && !m.closed.has(agentId) ? r.flock.running(agentId) : undefined;
    if (!agentId || !running || !m.prompts.has(running.promptId)) return;
    const p = m.prompts.get(running.promptId)!;
    if (late) r.flock.answerNext(agentId);
    const liveness = r.world.runtime.liveness;
    let release: () => void = () => {};
    if (widget) {
      await r.clock.advance(1100); // what the multiplexer last said is stale: the wait must ask it
      const gate = new Promise<void>((resolve) => (release = resolve));
      r.world.runtime.liveness = async (refs) => {
        await gate;
        return liveness(refs);
      };
    }
    const pushedBefore = resultPushes(r).includes(running.promptId);
    const waiting = r.shepherd.wait([parsePromptId(running.promptId)], { timeoutSec: 5 });
    await settle();
    if (!late) r.flock.answerNext(agentId);
    if (widget) await r.shepherd.refreshFromFiles();
    await settle();
    release();
    r.world.runtime.liveness = liveness;
    const [item] = await waiting;
    if (item?.status !== "completed") return;
    if (!pushedBefore) {
      assert.ok(!resultPushes(r).includes(running.promptId), `${running.promptId} was pushed while a wait watched it`);
      if (p.notify) p.claimedByWait = true;
    }
    p.final ??= item;
  });

export const askCmd = (k: number, awaitReply: boolean) =>
  command(`ask(#${k}, awaitReply=${awaitReply})`, async (m, r) => {
    const agentId = pickOf(m.sheep, k);
    if (!agentId || m.closed.has(agentId)) return;
    const messageId = `m_${String(++m.counter).padStart(10, "0")}`;
    r.world.say(agentId, { messageId, kind: "question", text: `q${m.counter}`, ...(awaitReply ? { awaitReply: true, timeoutSec: 60 } : {}) });
    m.questions.set(messageId, { agentId, awaitReply });
  });

export const replyCmd = (k: number) =>
  command(`reply(#${k})`, async (m, r) => {
    const messageId = pickOf([...m.questions.keys()], k);
    if (!messageId) return;
    const q = m.questions.get(messageId)!;
    try {
      await r.shepherd.reply(parseAgentId(q.agentId), parseMessageId(messageId, "reply"), "answer");
      assert.ok(q.awaitReply, "a reply to a question that waits for none went through");
      r.world.stopAsking(q.agentId);
    } catch (e) {
      const code = codeOf(e);
      assert.ok(["reply_refused", "agent_closed"].includes(code), `reply failed: ${String(e)}`);
    }
  });

export const closeCmd = (k: number) =>
  command(`close(#${k})`, async (m, r) => {
    const agentId = pickOf(m.sheep, k);
    if (!agentId) return;
    await r.shepherd.close(parseAgentId(agentId));
    m.closed.add(agentId);
  });

/** The shepherd goes away: a reload keeps its owner; a crash leaves its records to a new one. */
export const restartCmd = (crash: boolean) =>
  command(crash ? "crash" : "reload", async (m, r) => {
    if (crash) {
      r.store.dead.add(r.owner);
      // A dead shepherd's closed sheep are let go, not adopted: their ids are unknown from now on.
      m.sheep = m.sheep.filter((id) => !m.closed.has(id));
      const kept = new Set(m.sheep);
      for (const p of m.prompts.values()) if (!kept.has(p.agentId)) p.dropped = true;
      for (const [id, q] of m.questions) if (!kept.has(q.agentId)) m.questions.delete(id);
    }
    await r.shepherd.dispose();
    if (crash) r.owner = `owner-${++r.generation}`;
    r.shepherd = shepherdFor(r);
    await r.shepherd.attach();
    r.shepherd.deliverTo({ deliver: (p) => r.pushes.push(p) });
  });

function commands() {
  const k = fc.nat(20);
  const prompt = fc
    .tuple(
      k,
      fc.boolean(),
      fc.constantFrom<DeliverAs | undefined>(undefined, "steer", "followUp", "followUp"),
      fc.option(fc.constantFrom("r1", "r2"), { nil: undefined }),
    )
    .map(([n, notify, as, rid]) => promptCmd(n, notify, as, rid));
  const answer = k.map((n) => answerCmd(n));
  // Listed more than once: a run needs sheep, prompts and answers to get anywhere.
  return [
    fc.constant(startCmd()),
    fc.constant(startCmd()),
    prompt,
    prompt,
    prompt,
    prompt,
    answer,
    answer,
    answer,
    k.map((n) => waitCmd(n)),
    fc.tuple(k, fc.boolean(), fc.boolean()).map(([n, late, widget]) => answerWhileWaitingCmd(n, late, widget)),
    fc.tuple(k, fc.boolean()).map(([n, a]) => askCmd(n, a)),
    k.map((n) => replyCmd(n)),
    k.map((n) => closeCmd(n)),
    fc.boolean().map((c) => restartCmd(c)),
  ];
}

async function setup(): Promise<{ model: () => AsyncModel; real: () => Promise<AsyncReal> }> {
  return {
    model: () => ({ sheep: [], closed: new Set(), prompts: new Map(), requestIds: new Map(), questions: new Map(), counter: 0 }),
    real: async () => {
      const world = new MemoryWorld();
      const r: AsyncReal = {
        world,
        flock: new AnsweringFlock(world),
        clock: new FakeClock(),
        store: new MemoryStore(),
        shepherd: undefined as unknown as Shepherd,
        owner: "owner-0",
        generation: 0,
        pushes: [],
        trace: [],
      };
      r.shepherd = shepherdFor(r);
      r.shepherd.deliverTo({ deliver: (p) => r.pushes.push(p) });
      return r;
    },
  };
}

/** Everything answered and waited out: each notified result reached the conversation exactly once. */
async function drain(m: AsyncModel, r: AsyncReal): Promise<void> {
  for (let round = 0; round < 20; round++) {
    for (const agentId of m.sheep) if (!m.closed.has(agentId)) while (r.flock.answerNext(agentId)) await settle();
    await quiet(r);
  }
  await check(m, r);
  const pushed = new Set(resultPushes(r));
  for (const [id, p] of m.prompts) {
    if (!p.notify || p.dropped) continue;
    const rec = r.shepherd.registry.prompts.get(id);
    if (!rec?.settled) continue;
    const delivered = p.claimedByWait || pushed.has(id) || rec.delivered?.by === "wait";
    assert.ok(delivered, `notified result ${id} never reached the conversation (${JSON.stringify(rec)})`);
  }
  await r.shepherd.dispose();
}

describe("the async herd, in random sequences", () => {
  it(`keeps its promises over ${RUNS} random runs (seed ${SEED})`, async () => {
    const s = await setup();
    const out = await fc.check(
      fc.asyncProperty(fc.array(fc.oneof(...commands()), { minLength: 10, maxLength: 40 }), async (cmds) => {
        const m = s.model();
        const r = await s.real();
        // Two sheep from the start, so prompts have somewhere to go from the first command.
        for (let i = 0; i < 2; i++) m.sheep.push((await r.shepherd.start({ definition: def, cwd: "/work" })).agentId);
        await fc.asyncModelRun(() => ({ model: m, real: r }), cmds);
        await drain(m, r);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    if (!out.failed) return;
    const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
    assert.fail(
      [
        `The async herd failed a random sequence (seed ${SEED}, shrunk ${out.numShrinks} times).`,
        `Replay: PI_SHEPHERD_SEED=${SEED} npx node --import tsx --test test/unit/core/async-model.test.ts`,
        `Smallest failing sequence: ${(out.counterexample?.[0] ?? []).map(String).join(", ")}`,
        "",
        cause,
      ].join("\n"),
    );
  });
});
