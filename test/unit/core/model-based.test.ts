/**
 * A model-based test of the core: random sequences of start (plain and isolated), resume (of
 * plain and isolated sheep), prompt, wait, close, delegate, prune and shepherd restarts (some issued two at once, as pi runs a turn's tool calls),
 * interleaved with what real multiplexers and sheep do to them: pane ids reused by a new tmux
 * server, transient CLI failures, panes closed by the user, pi crashing. After every step the
 * outcome is checked against a small model of what must hold.
 *
 * Seeded: PI_SHEPHERD_SEED picks the seed (a new one each run otherwise, shown in the test
 * name); a failure prints the seed, the shrunk sequence, what the shepherd answered at each
 * step, and the command line that replays it exactly. PI_SHEPHERD_RUNS sets the number of runs.
 */
import { type AgentId, parseAgentId, parsePromptId } from "../../../src/domain/ids.ts";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Delegation } from "../../../src/core/delegation/delegate.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition, AgentStatus, WaitItem } from "../../../src/ports/types.ts";
import { type AnswerPlan, type BootPlan, type ChaosSheep, ChaosWorld, FLAKY_OPS, type FlakyOp, NEIGHBOUR } from "../../support/chaos-world.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };
const INTERVAL_MS = 1000;
const START_TIMEOUT_MS = 5000;
/** A wait at least this long must notice a dead sheep: two liveness intervals and a margin. */
const NOTICE_SEC = 3;
const UNKNOWN_PROMPT = "p_zzzzzzzzzz";

interface Real {
  world: ChaosWorld;
  clock: FakeClock;
  shepherd: Shepherd;
  owner: string;
  generation: number;
  trace: string[];
}

interface SheepModel {
  label: string;
  closed: boolean;
  /** Its start failed and its pane could not be closed: recorded, still starting, never ready. */
  failedStart?: boolean;
  /** Forgotten by the shepherd (pruned, let go on attach): its id is unknown from now on. */
  dropped: boolean;
}

interface PromptModel {
  agentId: string;
  /** The one final result, once a wait returned it: every later wait must return it again. */
  final?: WaitItem;
  dropped: boolean;
  cancelledByClose: boolean;
}

interface Model {
  sheep: Map<string, SheepModel>;
  prompts: Map<string, PromptModel>;
  counter: number;
}

type Cmd = fc.AsyncCommand<Model, Real>;

// --- driving the fake clock ---------------------------------------------------------------

async function quiesce(): Promise<void> {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

/** Runs a call to its end on the fake clock, jumping from timer to timer. */
async function drive<T>(r: Real, call: Promise<T>, what: string): Promise<T> {
  let done = false;
  const tracked = call.finally(() => {
    done = true;
  });
  tracked.catch(() => undefined);
  const limit = r.clock.now() + 30 * 60_000;
  for (;;) {
    await quiesce();
    if (done) return tracked;
    if (r.clock.now() > limit) throw new Error(`${what} still runs after 30 minutes on the clock`);
    if (!r.clock.fireNext()) throw new Error(`${what} hangs: it has not finished and nothing is scheduled`);
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

function outcome<T>(p: Promise<T>): Promise<Outcome<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function codeOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return /^\[(\w+)\]/.exec(text)?.[1] ?? `uncoded error: ${text}`;
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
}

const show = (x: unknown) => JSON.stringify(x);

// --- small helpers --------------------------------------------------------------------------

function pick<T>(xs: readonly T[], k: number): T | undefined {
  return xs.length === 0 ? undefined : xs[k % xs.length];
}

function sheepIds(m: Model, keep: (s: SheepModel, id: string) => boolean = () => true): AgentId[] {
  return [...m.sheep].filter(([id, s]) => keep(s, id)).map(([id]) => parseAgentId(id));
}

function injectedNow(r: Real): Record<FlakyOp, number> {
  return { ...r.world.injected };
}

function flakedSince(r: Real, before: Record<FlakyOp, number>, ops: readonly FlakyOp[] = FLAKY_OPS): boolean {
  return ops.some((op) => r.world.injected[op] > before[op]);
}

function note(r: Real, line: string): void {
  r.trace.push(line);
}

function drop(m: Model, agentId: string): void {
  m.sheep.get(agentId)!.dropped = true;
  for (const p of m.prompts.values()) if (p.agentId === agentId) p.dropped = true;
}

function liveLabels(r: Real): Set<string> {
  return new Set([...r.shepherd.registry.agents.values()].filter((a) => a.state !== "closed").map((a) => a.label));
}

function makeShepherd(r: Real): Shepherd {
  const { runtime, host } = r.world.view(r.owner);
  const owner = r.owner;
  return new Shepherd({
    runtime,
    files: host,
    owner,
    clock: r.clock,
    livenessIntervalMs: INTERVAL_MS,
    startTimeoutMs: START_TIMEOUT_MS,
    defaultWaitTimeoutSec: NOTICE_SEC,
    store: r.world.store,
    workspace: r.world.workspace,
    ownerAlive: (o) => o === owner || o === NEIGHBOUR,
  });
}

// --- what must hold after every step -------------------------------------------------------

function checkInvariants(m: Model, r: Real): void {
  const reg = r.shepherd.registry;
  const live = [...reg.agents.values()].filter((a) => a.state !== "closed");
  const labels = live.map((a) => a.label);
  assert.equal(new Set(labels).size, labels.length, `labels of live sheep are not unique: ${labels.join(", ")}`);

  for (const a of reg.agents.values()) {
    const s = m.sheep.get(a.agentId);
    assert.ok(s && !s.dropped, `the registry holds ${a.agentId}, which is not a sheep of ours`);
    assert.equal(a.owner, r.owner, `record ${a.agentId} names owner ${a.owner}`);
    assert.equal(a.label, s.label, `${a.agentId} changed its label`);
    if (s.closed) assert.equal(a.state, "closed", `${a.agentId} was closed and is ${a.state} again`);
  }
  for (const id of sheepIds(m, (s) => !s.dropped)) assert.ok(reg.agents.has(id), `${id} vanished from the registry`);

  const ours = new Set(r.world.prepared);
  for (const k of r.world.kills) assert.ok(ours.has(k.agentId), `pane ${k.paneId} of ${k.agentId} was closed, and that sheep is not ours`);
  const stored = r.world.store.peek();
  assert.deepEqual(
    stored.agents.filter((a) => a.owner === NEIGHBOUR).map((a) => a.agentId),
    r.world.neighbourIds,
    "another shepherd's records were lost from the shared store",
  );

  // state.json round-trips after every step: the store holds (and a load accepts) what the
  // registry holds, whatever path made the record, so a reloaded shepherd adopts exactly that.
  const storedMine = stored.agents.filter((a) => a.owner === r.owner);
  assert.deepEqual(
    storedMine.map((a) => a.agentId).sort(),
    [...reg.agents.keys()].sort(),
    "state.json does not round-trip: the store and the registry hold different sheep",
  );
  for (const a of storedMine) {
    // state (and when it last changed) is derived again from the panes and files by whoever reads the record next
    const { state: _stored, stateSince: _storedSince, ...rest } = a;
    const { state: _held, stateSince: _heldSince, ...want } = reg.agents.get(a.agentId)!;
    assert.deepStrictEqual(rest, want, `state.json does not round-trip: the stored record of ${a.agentId} differs from the registry's`);
  }
  // One record owns a worktree at a time, and one pi runs on a conversation at a time.
  const holders = new Map<string, string>();
  for (const a of reg.agents.values()) {
    if (!a.worktree) continue;
    const other = holders.get(a.worktree.path);
    assert.ok(!other, `the worktree ${a.worktree.path} is held by both ${other} and ${a.agentId}`);
    holders.set(a.worktree.path, a.agentId);
  }
  const onSession = new Map<string, string>();
  for (const a of live) {
    if (a.state === "exited") continue;
    const other = onSession.get(a.sessionPath);
    assert.ok(!other, `${other} and ${a.agentId} both run on the session ${a.sessionPath}`);
    onSession.set(a.sessionPath, a.agentId);
  }
  for (const p of reg.prompts.values()) {
    if (!p.settled) continue;
    const s = stored.prompts.find((x) => x.promptId === p.promptId);
    assert.deepStrictEqual(s?.settled, p.settled, `the stored result of ${p.promptId} differs from the registry's`);
  }

  for (const [id, p] of m.prompts) {
    if (!p.final || p.dropped) continue;
    assert.deepStrictEqual(reg.prompts.get(id)?.settled, p.final, `the settled result of ${id} changed`);
  }

  // A pane of ours that no live record names can never be closed by us again: not even a close
  // that failed (a failed start's, a warm sheep's) may forget a pane that is still there.
  const recorded = new Set<string>(live.map((a) => a.agentId));
  for (const pane of r.world.panes.values()) {
    if (pane.kind !== "sheep" || !pane.mark || recorded.has(pane.mark)) continue;
    assert.fail(`pane ${pane.paneId} of ${pane.mark} is alive but no record of ours names it (a leaked sheep)`);
  }
}

/** Every command: one world step, the body, then the invariants; a failure carries the trace. */
function command(name: string, body: (m: Model, r: Real) => Promise<void>): Cmd {
  return {
    check: () => true,
    async run(m, r) {
      r.world.step();
      try {
        await body(m, r);
        checkInvariants(m, r);
      } catch (e) {
        throw new Error(
          `${name}: ${e instanceof Error ? e.message : String(e)}\nWhat happened, step by step:\n  ${[...r.trace, `${name} -> FAILED`].join("\n  ")}`,
        );
      }
    },
    toString: () => name,
  };
}

// --- the shepherd's calls, each begun now and checked once everything of its step ended ----

interface Begun {
  done: Promise<unknown>;
  /** Checks the outcome and updates the model; `concurrent` when another call ran alongside. */
  finish(concurrent: boolean): void;
}

interface Op {
  name: string;
  /**
   * Order of finishing in a concurrent step: the model learns of new prompts, then closes, then
   * prunes, before it judges statuses and waits that ran alongside them.
   */
  rank: number;
  begin(m: Model, r: Real): Begun;
}

function begun<T>(call: Promise<T>, finish: (value: T, concurrent: boolean) => void): Begun {
  let value: { v: T } | undefined;
  const done = call.then((v) => {
    value = { v };
  });
  return { done, finish: (concurrent) => finish(value!.v, concurrent) };
}

function single(op: Op): Cmd {
  return command(op.name, async (m, r) => {
    const b = op.begin(m, r);
    await drive(r, b.done, op.name);
    b.finish(false);
  });
}

function together(a: Op, b: Op): Cmd {
  const name = `at once: ${a.name} & ${b.name}`;
  return command(name, async (m, r) => {
    const started = [a, b].map((op) => ({ op, b: op.begin(m, r) }));
    await drive(r, Promise.all(started.map((x) => x.b.done)), name);
    for (const x of started.sort((p, q) => p.op.rank - q.op.rank)) x.b.finish(true);
  });
}

function startOp(label: string | undefined, twin: boolean, plans: readonly BootPlan[], isolate = false): Op {
  const used = twin ? plans.slice(0, 2) : plans.slice(0, 1);
  return {
    name: `start(${twin ? "twice at once, " : ""}${isolate ? "isolated, " : ""}label=${label ?? "-"}, boot=${show(twin ? used : used[0])})`,
    rank: 0,
    begin(m, r) {
      const taken = liveLabels(r);
      const before = injectedNow(r);
      const firstPrepared = r.world.prepared.length;
      // Copies: the world hands each prepare its plan as it is, so the start knows its own sheep by them.
      const mine = used.map((boot) => ({ ...boot }));
      if (isolate) r.world.isolatedPlans.push(...mine);
      else {
        r.world.bootPlans.length = 0;
        r.world.bootPlans.push(...mine.map((boot) => ({ boot })));
      }
      const where = isolate ? { cwd: "/repo", isolate } : { cwd: "/work" };
      const calls = used.map(() => outcome(r.shepherd.start({ definition: def, ...where, ...(label !== undefined ? { label } : {}) })));
      return begun(Promise.all(calls), (outs) => {
        if (isolate) r.world.isolatedPlans.length = 0;
        else r.world.bootPlans.length = 0;
        const prepared = r.world.prepared.slice(firstPrepared).filter((x) => mine.includes(r.world.sheep.get(x)!.boot));
        const flaked = flakedSince(r, before, ["createPane", "mark"]);
        let launched = 0;
        for (const [i, out] of outs.entries()) {
          // The second of two starts with one label finds it reserved by the first.
          const refused = label !== undefined && (taken.has(label) || i === 1);
          if (out.ok) {
            const a = out.value;
            note(r, `start -> ${a.agentId} "${a.label}" ${a.paneId}`);
            assert.ok(!refused, `start took label "${a.label}", which a live sheep or the other start held`);
            if (label !== undefined) assert.equal(a.label, label);
            const plan = used[launched++]!;
            assert.equal(r.world.paneOf(a.agentId)?.paneId, a.paneId, `start returned ${a.agentId} on ${a.paneId}, which is not its pane`);
            assert.ok(r.world.sheep.get(a.agentId)?.ready, `start returned ${a.agentId} though pi never came up (boot ${show(plan)})`);
            if (isolate) assert.equal(a.worktree?.path, `/wt/worktrees/${a.agentId}`, `an isolated start returned ${show(a.worktree)}`);
            m.sheep.set(a.agentId, { label: a.label, closed: false, dropped: false });
            continue;
          }
          const code = codeOf(out.error);
          note(r, `start -> ${firstLine(out.error)}`);
          if (refused) {
            assert.equal(code, "invalid_params", `a start with a taken label failed with ${firstLine(out.error)}`);
            continue;
          }
          assert.notEqual(code, "invalid_params", `start refused a free label: ${firstLine(out.error)}`);
          const plan = used[launched]!;
          const agentId = prepared[launched++];
          if (plan.kind === "ready") {
            assert.ok(flaked, `start failed though pi came up and the multiplexer never failed: ${firstLine(out.error)}`);
          }
          assert.ok(["start_failed", "runtime_error"].includes(code), `start failed with ${firstLine(out.error)}`);
          if (!agentId) continue;
          if (r.world.paneOf(agentId)) {
            // Its pane could not be closed: the record is how we ever close it.
            const rec = r.shepherd.registry.agents.get(agentId);
            assert.ok(rec, `a failed start forgot ${agentId}, whose pane is still there`);
            assert.match(String(out.error), /could not be closed/, `a failed start kept ${agentId} without saying so`);
            m.sheep.set(agentId, { label: rec.label, closed: false, dropped: false, failedStart: true });
          } else assert.ok(!r.shepherd.registry.agents.has(agentId), `a failed start left its record ${agentId}`);
        }
      });
    },
  };
}

/**
 * Resumes sheep #k (any of ours: a live one must be refused) on a new sheep, as the tool does:
 * its card, then a start on its session. An isolated one's worktree goes over to the new sheep.
 */
function resumeOp(k: number, boot: BootPlan): Op {
  return {
    name: `resume(#${k}, boot=${show(boot)})`,
    rank: 0,
    begin(m, r) {
      const id = pick(sheepIds(m), k);
      if (!id) return begun(Promise.resolve(), () => undefined);
      const before = injectedNow(r);
      const firstPrepared = r.world.prepared.length;
      const session = r.world.cards.get(id)?.sessionPath;
      // The record that holds the worktree of this conversation now, if one of ours does.
      const holder = [...r.shepherd.registry.agents.values()].find((a) => a.worktree && a.sessionPath === session && a.state === "closed");
      const worktree = holder?.worktree;
      r.world.resumePlans.set(id, [...(r.world.resumePlans.get(id) ?? []), boot]);
      const call = (async () => {
        const card = await r.shepherd.resumable(id);
        return r.shepherd.start({ definition: card.definition, cwd: card.cwd, ...(card.model !== undefined ? { model: card.model } : {}), resume: card });
      })();
      return begun(outcome(call), (out, concurrent) => {
        r.world.resumePlans.delete(id);
        const s = m.sheep.get(id)!;
        // The sheep it continues, if it merely exited, was closed first (with what it had pending).
        if (r.shepherd.registry.agents.get(id)?.state === "closed" && !s.closed) {
          s.closed = true;
          for (const [pid, p] of m.prompts) {
            if (p.agentId === id && !p.final && r.shepherd.registry.prompts.get(pid)?.settled?.status === "cancelled") p.cancelledByClose = true;
          }
        }
        if (out.ok) {
          const a = out.value;
          note(r, `resume ${id} -> ${a.agentId} "${a.label}" ${a.paneId}${a.worktree ? ` in ${a.worktree.path}` : ""}`);
          assert.equal(a.resumedFrom, id, `resume of ${id} says it continues ${a.resumedFrom}`);
          assert.equal(a.sessionPath, session, `resume of ${id} runs on ${a.sessionPath}, not its session ${session}`);
          assert.ok(
            r.world.sheep.get(a.agentId)?.ready,
            `resume returned ${a.agentId} though pi never came up (boot ${show(r.world.sheep.get(a.agentId)?.boot)})`,
          );
          if (worktree && !concurrent) {
            assert.deepStrictEqual(a.worktree, worktree, `the resumed ${a.agentId} did not take over the worktree of ${holder!.agentId}`);
            assert.equal(r.shepherd.registry.agents.get(holder!.agentId)?.worktree, undefined, `${holder!.agentId} still holds the worktree it handed over`);
          }
          m.sheep.set(a.agentId, { label: a.label, closed: false, dropped: false });
          return;
        }
        const code = codeOf(out.error);
        note(r, `resume ${id} -> ${firstLine(out.error)}`);
        if (["not_resumable", "unknown_agent"].includes(code)) {
          // Refused before anything started: nothing was prepared, and a worktree stays where it was.
          if (!concurrent) assert.equal(r.world.prepared.length, firstPrepared, `a refused resume prepared a sheep: ${firstLine(out.error)}`);
          if (code === "unknown_agent") assert.ok(!r.world.sheep.get(id)?.ready, `resume of ${id}, whose pi came up, said ${firstLine(out.error)}`);
          return;
        }
        assert.ok(["start_failed", "runtime_error"].includes(code), `resume failed with ${firstLine(out.error)}`);
        // The sheep this resume prepared (alongside another resume of the same sheep, either may be it:
        // one that succeeded is set again by its own outcome).
        const mine = r.world.prepared.slice(firstPrepared).filter((x) => r.world.cards.get(x)?.resumedFrom === id && (!concurrent || !m.sheep.has(x)));
        for (const agentId of concurrent ? mine : mine.slice(0, 1)) {
          const got = r.world.sheep.get(agentId)!.boot;
          if (!concurrent && got.kind === "ready")
            assert.ok(flakedSince(r, before), `a resume failed though pi came up and nothing flaked: ${firstLine(out.error)}`);
          if (r.world.paneOf(agentId)) {
            const rec = r.shepherd.registry.agents.get(agentId);
            assert.ok(rec, `a failed resume forgot ${agentId}, whose pane is still there`);
            m.sheep.set(agentId, { label: rec.label, closed: false, dropped: false, failedStart: true });
          } else {
            assert.ok(!r.shepherd.registry.agents.has(agentId), `a failed resume left its record ${agentId}`);
            if (worktree && !concurrent)
              assert.deepStrictEqual(holder!.worktree, worktree, `a failed resume did not give the worktree back to ${holder!.agentId}`);
          }
        }
      });
    },
  };
}

function promptOp(k: number, plan: AnswerPlan): Op {
  return {
    name: `prompt(#${k}, answer=${show(plan)})`,
    rank: 1,
    begin(m, r) {
      const id = pick(sheepIds(m), k);
      if (!id) return begun(Promise.resolve(), () => undefined);
      const text = `m${++m.counter}`;
      r.world.promptPlans.set(text, plan);
      const active = r.shepherd.registry.agents.get(id)?.activePromptId;
      const sheep = r.world.sheep.get(id)!;
      const alive = r.world.piAlive(sheep);
      const wasClosed = m.sheep.get(id)!.closed;
      return begun(outcome(r.shepherd.prompt(id, text)), (out, concurrent) => {
        const s = m.sheep.get(id)!;
        if (out.ok) {
          note(r, `prompt ${id} "${text}" -> ${out.value.promptId}`);
          assert.ok(!wasClosed, "prompt was accepted by a closed sheep");
          // Only a prune alongside can have forgotten the sheep: as if it ran right after the prompt.
          assert.ok(!s.dropped || concurrent, `prompt was accepted by ${id}, which the shepherd had forgotten`);
          m.prompts.set(out.value.promptId, { agentId: id, dropped: s.dropped, cancelledByClose: false });
          return;
        }
        const code = codeOf(out.error);
        note(r, `prompt ${id} -> ${firstLine(out.error)}`);
        // With a close or prune alongside, either may have come first.
        const rec = r.shepherd.registry.agents.get(id);
        const goneAlongside = concurrent && (!rec || rec.state === "closed");
        if (code === "unknown_agent" && (s.dropped || (concurrent && !rec))) return;
        if (wasClosed) return assert.equal(code, "agent_closed");
        if (code === "prompt_pending") {
          return assert.ok(!(active !== undefined && sheep.outbox.has(active) && !concurrent), `prompt_pending though ${active} has its result on disk`);
        }
        if (code === "agent_closed") return assert.ok(!alive || goneAlongside, `a live sheep was refused as gone: ${firstLine(out.error)}`);
        // A close or prune alongside may remove the inbox under a prompt that already passed its checks.
        if (code === "runtime_error" && goneAlongside) return;
        assert.fail(`prompt failed with ${firstLine(out.error)}`);
      });
    },
  };
}

interface Meanwhile {
  afterMs: number;
  what: "kill" | "crash" | "answer";
}

function waitOp(picks: readonly number[], unknown: boolean, timeoutSec: number, meanwhile?: Meanwhile): Op {
  const during = meanwhile ? `, ${meanwhile.what} at +${meanwhile.afterMs}ms` : "";
  return {
    name: `wait(${picks.map((k) => `#${k}`).join(",")}${unknown ? ",unknown" : ""}, ${timeoutSec}s${during})`,
    rank: 9,
    begin(m, r) {
      const all = [...m.prompts.keys()];
      const ids = [...(all.length ? picks.map((k) => pick(all, k)!) : []), ...(unknown ? [UNKNOWN_PROMPT] : [])];
      if (ids.length === 0) return begun(Promise.resolve(), () => undefined);
      const diesAt = new Map<string, number>();
      const answeredAt = new Map<string, number>();
      for (const id of ids) {
        const p = m.prompts.get(id);
        const s = p && r.world.sheep.get(p.agentId);
        if (s && !r.world.piAlive(s)) diesAt.set(id, 0);
        if (s?.outbox.has(id)) answeredAt.set(id, 0);
      }
      // Something happens to the first prompt's sheep while the wait runs.
      const target = m.prompts.get(ids[0]!);
      const stop = new AbortController();
      if (meanwhile && target) {
        void r.clock
          .sleep(meanwhile.afterMs, stop.signal)
          .then(() => {
            const s = r.world.sheep.get(target.agentId)!;
            if (!r.world.piAlive(s)) return;
            if (meanwhile.what === "kill") r.world.removePane(s.paneId!, false);
            if (meanwhile.what === "crash") r.world.crash(s.agentId, { code: 1, signal: null }, false);
            if (meanwhile.what === "answer") r.world.answer(s.agentId, ids[0]!, { outcome: "completed", afterSteps: 0, afterMs: 0 });
            note(r, `world, during the wait: ${meanwhile.what} ${s.agentId}`);
            for (const id of ids) {
              if (m.prompts.get(id)?.agentId !== target.agentId) continue;
              if (meanwhile.what === "answer") {
                if (r.world.sheep.get(target.agentId)!.outbox.has(id) && !answeredAt.has(id)) answeredAt.set(id, meanwhile.afterMs);
              } else if (!diesAt.has(id)) diesAt.set(id, meanwhile.afterMs);
            }
          })
          .catch(() => undefined);
      }
      const before = injectedNow(r);
      return begun(
        r.shepherd
          .wait(
            ids.map((id) => parsePromptId(id)),
            { timeoutSec },
          )
          .finally(() => stop.abort()),
        (items, concurrent) => {
          const flaked = flakedSince(r, before, ["liveness"]);
          note(r, `wait ${ids.join(",")} ${timeoutSec}s -> ${items.map((i) => `${i.status}${i.error ? ` ${i.error.split(" ")[0]}` : ""}`).join(", ")}`);
          assert.deepEqual(
            items.map((i) => i.promptId),
            ids,
            "wait did not answer in the order asked",
          );
          const budgetMs = timeoutSec * 1000;
          for (const [n, item] of items.entries()) {
            const id = ids[n]!;
            const died = diesAt.get(id);
            const answered = answeredAt.get(id);
            checkWaitItem(m, r, id, item, {
              mustSeeDeath: died !== undefined && budgetMs - died >= NOTICE_SEC * 1000 && !flaked && !concurrent,
              mustSeeResult: answered !== undefined && answered < budgetMs && !concurrent,
              resultBefore: answered === 0,
              concurrent,
              flaked,
            });
          }
        },
      );
    },
  };
}

function checkWaitItem(
  m: Model,
  r: Real,
  id: string,
  item: WaitItem,
  expect: { mustSeeDeath: boolean; mustSeeResult: boolean; resultBefore: boolean; concurrent: boolean; flaked: boolean },
): void {
  const p = m.prompts.get(id);
  if (!p) {
    assert.equal(item.status, "failed");
    assert.match(item.error ?? "", /^\[unknown_prompt\]/);
    return;
  }
  if (p.dropped && item.status === "failed" && item.error?.startsWith("[unknown_prompt]")) return;
  // A wait that ran alongside the one that got the result may have timed out before it came.
  if (p.final && expect.concurrent && item.status === "timeout") return;
  if (p.final) {
    assert.deepStrictEqual(item, p.final, `a later wait on ${id} returned another result than the first`);
    return;
  }
  const s = r.world.sheep.get(p.agentId)!;
  const written = s.outbox.get(id);
  const closed = m.sheep.get(p.agentId)!.closed;
  switch (item.status) {
    case "timeout":
      assert.ok(!expect.mustSeeResult || closed, `wait timed out on ${id} though its result was on disk`);
      assert.ok(
        !expect.mustSeeDeath,
        `wait reported ${id} still working to its deadline, but its sheep's ${r.world.paneOf(p.agentId) ? "pi exited" : "pane is gone"}`,
      );
      return;
    case "completed":
      assert.equal(written?.status, "completed", `wait said completed, the sheep wrote ${show(written)}`);
      assert.equal(item.text, written!.text, "wait's text is not the sheep's text");
      break;
    case "failed": {
      const code = codeOf(item.error);
      if (code === "provider_error") assert.equal(written?.status, "failed", `provider_error, but the sheep wrote ${show(written)}`);
      else if (code === "pane_gone") {
        assert.ok(!r.world.paneOf(p.agentId), `wait failed ${id} with pane_gone, but the sheep's pane ${s.paneId} is alive and carries its mark`);
        assert.ok(!expect.resultBefore, `wait failed ${id} with pane_gone though its result was on disk`);
      } else if (code === "pi_exited") {
        assert.ok(s.dead, `wait failed ${id} with pi_exited, but pi runs`);
        assert.ok(!expect.resultBefore, `wait failed ${id} with pi_exited though its result was on disk`);
        checkExitNamed(r, s, item.error!, expect.flaked || expect.concurrent);
      } else assert.fail(`wait failed ${id} with ${item.error}`);
      break;
    }
    case "cancelled":
      assert.ok(
        written?.status === "cancelled" || ((closed || p.cancelledByClose) && /^\[cancelled\]/.test(item.error ?? "")),
        `wait said cancelled: ${item.error}; the sheep wrote ${show(written)}`,
      );
      break;
    default:
      assert.fail(`wait returned ${item.status} for ${id}`);
  }
  p.final = structuredClone(item);
}

/** The text of how a process ended, as the shepherd words it. */
function exitWords(exit: { code: number | null; signal: string | null }): string {
  return exit.code !== null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
}

/**
 * A [pi_exited] names how pi truly ended whenever a witness knew it: exit.json always (it is
 * read first), the multiplexer whenever it answered; "unknown" only from the pid alone.
 */
function checkExitNamed(r: Real, s: ChaosSheep, error: string, excused: boolean): void {
  const named = /exited \((exit code -?\d+|signal \w+)\)/.exec(error)?.[1];
  if (named !== undefined) {
    assert.ok(s.exit, `"${error}" names how pi ended, but pi was killed with its pane and nobody knows how`);
    assert.equal(named, exitWords(s.exit), `"${error}" does not say how pi ended`);
    return;
  }
  if (s.exitReport) assert.fail(`"${error}" does not say how pi ended, though exit.json says ${exitWords(s.exitReport)}`);
  const ended = r.world.paneOf(s.agentId)?.ended;
  if (!excused && ended?.collected) assert.fail(`"${error}" does not say how pi ended, though the multiplexer says ${exitWords(ended.exit)}`);
}

/** A close's outcome without the worktree an isolated sheep's close reports (kept, as none was asked to go). */
function closeShape<T extends { worktree?: unknown }>(o: T): Omit<T, "worktree"> {
  const { worktree: _kept, ...rest } = o;
  return rest;
}

function closeOp(k: number, twice: boolean): Op {
  return {
    name: `close(#${k}${twice ? ", twice" : ""})`,
    rank: 2,
    begin(m, r) {
      const id = pick(sheepIds(m), k);
      if (!id) return begun(Promise.resolve(), () => undefined);
      const wasClosed = m.sheep.get(id)!.closed;
      const pending = [...m.prompts].filter(([, p]) => p.agentId === id && !p.final && !p.cancelledByClose).map(([pid]) => pid);
      const answered = new Set(pending.filter((pid) => r.world.sheep.get(id)!.outbox.has(pid)));
      const before = injectedNow(r);
      const kills = r.world.kills.length;
      const call = (async () => {
        const first = await outcome(r.shepherd.close(id));
        const again = twice && first.ok ? await outcome(r.shepherd.close(id)) : undefined;
        return { first, again };
      })();
      return begun(call, ({ first: out, again }, concurrent) => {
        const s = m.sheep.get(id)!;
        note(r, `close ${id} -> ${out.ok ? show(out.value) : firstLine(out.error)}`);
        if (!concurrent) for (const k of r.world.kills.slice(kills)) assert.equal(k.agentId, id, `closing ${id} closed the pane of ${k.agentId}`);
        if (s.dropped && !out.ok && codeOf(out.error) === "unknown_agent") return;
        // prune forgets closed sheep at once: a close alongside it may find the id unknown
        if (concurrent && wasClosed && !out.ok && codeOf(out.error) === "unknown_agent" && !r.shepherd.registry.agents.has(id)) return;
        if (wasClosed) {
          assert.ok(out.ok, `closing a closed sheep again failed: ${out.ok ? "" : firstLine(out.error)}`);
          return assert.deepEqual(closeShape(out.value), { agentId: id, cancelledPromptIds: [], alreadyClosed: true });
        }
        if (!out.ok) {
          // A close that failed may have cancelled the prompt already (one handed over alongside, too).
          for (const [pid, p] of m.prompts) {
            if (p.agentId === id && !p.final && r.shepherd.registry.prompts.get(pid)?.settled?.status === "cancelled") p.cancelledByClose = true;
          }
          const sheep = r.world.sheep.get(id)!;
          const now = sheep.paneId ? r.world.panes.get(sheep.paneId) : undefined;
          assert.ok(
            flakedSince(r, before, ["close", "liveness"]) && codeOf(out.error) === "runtime_error",
            `closing our own sheep failed: ${firstLine(out.error)} (its pane ${r.world.paneOf(id) ? "is alive" : `is gone, and ${sheep.paneId} is now ${now ? `${now.kind} pane ${show(now.mark ?? "unmarked")}` : "nobody's"}`})`,
          );
          return;
        }
        if (!concurrent) assert.equal(out.value.alreadyClosed, false);
        assert.ok(!r.world.paneOf(id), `close returned but the pane of ${id} is still there`);
        for (const pid of out.value.cancelledPromptIds) {
          // A prompt alongside may have been handed over just before the close.
          const fresh = concurrent && m.prompts.get(pid)?.agentId === id && !m.prompts.get(pid)?.final;
          assert.ok(pending.includes(pid) || fresh, `close cancelled ${pid}, which was not pending`);
          assert.ok(!answered.has(pid), `close cancelled ${pid} though its result was on disk`);
          m.prompts.get(pid)!.cancelledByClose = true;
        }
        s.closed = true;
        if (again) {
          note(r, `close ${id} again -> ${again.ok ? show(again.value) : firstLine(again.error)}`);
          assert.ok(again.ok, `closing twice failed: ${again.ok ? "" : firstLine(again.error)}`);
          assert.deepEqual(closeShape(again.value), { agentId: id, cancelledPromptIds: [], alreadyClosed: true });
        }
      });
    },
  };
}

/** `stale`: the multiplexer answered "alive" for a pane whose program had ended, not knowing yet. */
function checkStatus(m: Model, r: Real, st: AgentStatus, flaked: boolean, concurrent: boolean, stale: boolean): void {
  const s = m.sheep.get(st.agentId)!;
  if (s.closed) {
    if (!concurrent) assert.equal(st.state, "closed");
    return;
  }
  const sheep = r.world.sheep.get(st.agentId)!;
  if (r.world.piAlive(sheep)) {
    assert.ok(st.paneAlive, `status says the pane of live ${st.agentId} is gone`);
    const states = s.failedStart ? ["starting", "idle", "working"] : ["idle", "working"];
    assert.ok(states.includes(st.state), `a live sheep ${st.agentId} is reported ${st.state}`);
  }
  if (flaked || concurrent) return;
  const running = r.world.paneRunning(st.agentId);
  if (!stale) {
    assert.equal(
      st.paneAlive,
      running,
      `status says the pane of ${st.agentId} ${st.paneAlive ? "runs" : "runs nothing"}; it ${running ? "runs" : "runs nothing"}`,
    );
  }
  // A pi that never became ready reported no pid: only the multiplexer tells of its end, and a
  // missed SIGCHLD only at its next look (only a kept failed start is such a sheep).
  const unwitnessed = s.failedStart && !sheep.ready && !sheep.exitReport;
  if (r.world.deathKnown(sheep) && !unwitnessed) assert.equal(st.state, "exited", `a dead sheep ${st.agentId} is reported ${st.state}`);
  const told = /^pi exited \((.*)\)$/.exec(st.runtimeStatus ?? "")?.[1];
  if (told !== undefined) {
    assert.ok(sheep.dead, `status says ${st.runtimeStatus}, but pi runs`);
    if (sheep.exit && (sheep.exitReport || r.world.paneOf(st.agentId)?.ended?.collected)) {
      assert.equal(told, exitWords(sheep.exit), `status says ${st.runtimeStatus}, but pi ended with ${exitWords(sheep.exit)}`);
    }
  }
}

function statusOp(k: number): Op {
  return {
    name: `status(#${k})`,
    rank: 5,
    begin(m, r) {
      const id = pick(sheepIds(m), k);
      if (!id) return begun(Promise.resolve(), () => undefined);
      const before = injectedNow(r);
      const stale = r.world.staleAnswers;
      return begun(outcome(r.shepherd.status(id)), (out, concurrent) => {
        note(r, `status ${id} -> ${out.ok ? `${out.value.state} paneAlive=${out.value.paneAlive}` : firstLine(out.error)}`);
        if (m.sheep.get(id)!.dropped && !out.ok && codeOf(out.error) === "unknown_agent") return;
        assert.ok(out.ok, `status failed: ${out.ok ? "" : firstLine(out.error)}`);
        checkStatus(m, r, out.value, flakedSince(r, before, ["liveness"]), concurrent, r.world.staleAnswers > stale);
      });
    },
  };
}

const herdOp: Op = {
  name: "herd()",
  rank: 5,
  begin(m, r) {
    const before = injectedNow(r);
    const stale = r.world.staleAnswers;
    return begun(r.shepherd.herd(), (herd, concurrent) => {
      note(r, `herd -> ${herd.map((h) => `${h.label}:${h.state}`).join(" ") || "(none)"}`);
      for (const st of herd) checkStatus(m, r, st, flakedSince(r, before, ["liveness"]), concurrent, r.world.staleAnswers > stale);
      if (concurrent) return;
      const live = [...r.shepherd.registry.agents.values()].filter((a) => a.state !== "closed").map((a) => a.agentId);
      assert.deepEqual(herd.map((h) => h.agentId).sort(), live.sort(), "herd does not list exactly the sheep that are not closed");
    });
  },
};

/** The widget's view: records and files only, never the multiplexer. */
const herdFromFilesOp: Op = {
  name: "refreshFromFiles()",
  rank: 5,
  begin(m, r) {
    return begun(outcome(r.shepherd.refreshFromFiles()), (out) => {
      assert.ok(out.ok, `refreshFromFiles failed: ${out.ok ? "" : firstLine(out.error)}`);
      note(r, `refreshFromFiles -> ${out.value.map((h) => `${h.label}:${h.state}`).join(" ") || "(none)"}`);
      for (const h of out.value) {
        assert.ok(m.sheep.has(h.agentId), `refreshFromFiles lists ${h.agentId}, which is not ours`);
        // A clock runs only for a state that has one: starting (since recorded), working (since prompted).
        if (h.since !== undefined) assert.ok(["starting", "working"].includes(h.state), `${h.agentId} is ${h.state} with a clock`);
        if (h.state === "starting") assert.ok(h.since !== undefined, `${h.agentId} is starting without a clock`);
      }
    });
  },
};

const pruneOp: Op = {
  name: "prune()",
  rank: 3,
  begin(m, r) {
    const before = injectedNow(r);
    return begun(outcome(r.shepherd.prune()), (out, concurrent) => {
      assert.ok(out.ok, `prune failed: ${out.ok ? "" : firstLine(out.error)}`);
      const removed = out.value.removed;
      note(r, `prune -> ${removed.join(",") || "(none)"}`);
      for (const id of removed) {
        assert.ok(!r.world.paneOf(id), `prune dropped ${id}, whose pane is alive`);
        drop(m, id);
      }
      // Closed sheep are forgotten silently.
      for (const id of sheepIds(m, (s) => !s.dropped)) {
        if (r.shepherd.registry.agents.has(id)) continue;
        assert.ok(m.sheep.get(id)!.closed || (concurrent && !r.world.paneOf(id)), `prune forgot ${id}, which was neither closed nor gone`);
        drop(m, id);
      }
      if (concurrent || flakedSince(r, before, ["liveness"])) return;
      for (const id of sheepIds(m, (s) => !s.dropped)) assert.ok(r.world.paneOf(id), `prune kept ${id}, whose pane is gone`);
    });
  },
};

function delegateOp(parallel: boolean, plans: readonly { boot: BootPlan; answer: AnswerPlan }[], keepOpen: boolean): Op {
  const mode = parallel ? "parallel" : "single";
  const used = parallel ? plans : plans.slice(0, 1);
  return {
    name: `delegate(${mode}${keepOpen ? ", keepOpen" : ""}, ${show(used)})`,
    rank: 0,
    begin(m, r) {
      const texts = used.map(() => `t${++m.counter}`);
      r.world.bootPlans.length = 0;
      r.world.bootPlans.push(...used.map((p) => ({ boot: p.boot, answer: p.answer })));
      const before = injectedNow(r);
      const tasks = texts.map((task) => ({ definition: def, task, cwd: "/work" }));
      const run = new Delegation(r.shepherd, mode, tasks, {
        keepOpen,
        maxParallel: 2,
        waitTimeoutSec: NOTICE_SEC,
        clock: r.clock,
        now: () => r.clock.now(),
      })
        .run()
        // Its sheep close after it returns, off its path: the model looks once they have.
        .then(async (items) => {
          await r.shepherd.released();
          return items;
        });
      return begun(run, (items) => {
        r.world.bootPlans.length = 0;
        note(r, `delegate -> ${items.map((i) => `${i.agentId ?? "-"} ${i.status}${i.error ? ` ${i.error.split(" ")[0]}` : ""}`).join(", ")}`);
        const flaked = flakedSince(r, before);
        assert.deepEqual(
          items.map((i) => i.task),
          texts,
          "delegate answered out of order",
        );
        for (const [i, item] of items.entries()) {
          const plan = used[i]!;
          if (item.agentId) assert.equal(r.world.sheep.get(item.agentId)?.boot, plan.boot, "the test handed boot plans to the wrong tasks");
          if (!flaked) {
            const a = plan.answer;
            const expected =
              plan.boot.kind !== "ready"
                ? "failed [start_failed]"
                : a.outcome === "never" || a.afterMs >= NOTICE_SEC * 1000
                  ? "timeout"
                  : a.outcome === "completed"
                    ? "completed"
                    : a.outcome === "failed"
                      ? "failed [provider_error]"
                      : "cancelled";
            const got = item.status === "failed" ? `failed [${codeOf(item.error)}]` : item.status;
            assert.equal(got, expected, `delegated task ${i + 1} (${show(plan)}) ended ${got}: ${item.error ?? ""}`);
            if (expected === "completed") assert.equal(item.text, `answer to ${texts[i]}`);
          } else {
            assert.ok(["completed", "failed", "cancelled", "timeout"].includes(item.status), `delegated task ended ${item.status}`);
          }
          if (!item.agentId) continue;
          const rec = r.shepherd.registry.agents.get(item.agentId);
          assert.ok(rec, `delegate's sheep ${item.agentId} has no record`);
          const failedStart = item.status === "failed" && codeOf(item.error) === "start_failed";
          if (failedStart) assert.ok(r.world.paneOf(item.agentId) || rec.state === "closed", `a failed start named ${item.agentId}, whose pane is gone`);
          m.sheep.set(item.agentId, { label: rec.label, closed: rec.state === "closed", dropped: false, ...(failedStart ? { failedStart } : {}) });
          if (!keepOpen && !flaked) assert.equal(rec.state, "closed", `delegate left ${item.agentId} open`);
          for (const p of r.shepherd.registry.prompts.values()) {
            if (p.agentId !== item.agentId) continue;
            const pm: PromptModel = { agentId: p.agentId, dropped: false, cancelledByClose: p.settled?.status === "cancelled" && rec.state === "closed" };
            if (p.settled) {
              if (item.status !== "timeout") assert.equal(p.settled.status, item.status, "delegate reported another result than the prompt's");
              pm.final = structuredClone(p.settled);
            }
            m.prompts.set(p.promptId, pm);
          }
        }
      });
    },
  };
}

/**
 * The shepherd process dies (optionally in the middle of a start) and a new one, with a new
 * owner name, attaches to the same multiplexer and store.
 */
function restartCmd(midStart?: { boot: BootPlan; ticks: number }): Cmd {
  const name = `restart(${midStart ? `while a start is under way: boot=${show(midStart.boot)}, ${midStart.ticks} ticks in` : ""})`;
  return command(name, async (m, r) => {
    const old = r.shepherd;
    let inflight: string | undefined;
    if (midStart) {
      const first = r.world.prepared.length;
      r.world.bootPlans.length = 0;
      r.world.bootPlans.push({ boot: midStart.boot });
      void outcome(old.start({ definition: def, cwd: "/work" }));
      await quiesce();
      for (let i = 0; i < midStart.ticks; i++) {
        r.clock.fireNext();
        await quiesce();
      }
      r.world.bootPlans.length = 0;
      inflight = r.world.prepared[first];
      if (inflight && old.registry.agents.get(inflight)?.state !== "starting") {
        // The start ended before the shepherd died: an ordinary sheep, or none at all.
        const rec = old.registry.agents.get(inflight);
        if (rec) m.sheep.set(inflight, { label: rec.label, closed: false, dropped: false });
        inflight = undefined;
      }
    }
    const oldAgents = structuredClone([...old.registry.agents.values()]);
    const oldPrompts = structuredClone([...old.registry.prompts.values()]);
    const storedRecs = r.world.store.peek().agents.filter((a) => a.owner === r.owner);
    const stored = storedRecs.map((a) => a.agentId);
    // A dead shepherd's closed sheep are let go, not adopted: nothing is left to use (but one that
    // kept a worktree still leads to work that can be landed, and is adopted).
    const closedBefore = storedRecs.filter((a) => a.state === "closed" && !a.worktree).map((a) => a.agentId);
    r.world.deadOwners.add(r.owner);
    old.dispose();
    r.generation++;
    r.owner = `shepherd-${r.generation}`;
    r.shepherd = makeShepherd(r);
    const before = injectedNow(r);
    const report = await drive(r, r.shepherd.attach(), "attach");
    const flaked = flakedSince(r, before, ["liveness", "close"]);
    note(
      r,
      `restart as ${r.owner} -> adopted ${report.adopted.join(",") || "-"}; pruned ${report.pruned.join(",") || "-"}${inflight ? `; ${inflight} was starting` : ""}`,
    );

    assert.deepEqual(
      [...report.adopted].sort(),
      stored.filter((id) => !closedBefore.includes(id)).sort(),
      "attach did not take back exactly the dead shepherd's open sheep (and closed ones holding a worktree)",
    );
    if (!inflight) assert.deepEqual([...stored].sort(), oldAgents.map((a) => a.agentId).sort(), "the store lost or kept records the shepherd had");
    for (const id of closedBefore) {
      assert.ok(!r.world.store.peek().agents.some((a) => a.agentId === id), `the closed ${id} was kept in the store after its shepherd died`);
      drop(m, id);
    }
    for (const id of r.world.neighbourIds) assert.ok(!report.adopted.includes(id), `attach took ${id}, a live neighbour's sheep`);
    const pruned = new Set(report.pruned);
    for (const id of pruned) {
      assert.ok(report.adopted.includes(id), `attach pruned ${id}, which it did not adopt`);
      if (id === inflight) continue;
      assert.ok(!r.world.paneOf(id), `attach dropped ${id}, whose pane is alive`);
      drop(m, id);
    }
    for (const id of report.adopted) {
      if (pruned.has(id)) continue;
      const now = r.shepherd.registry.agents.get(id)!;
      if (id === inflight) {
        const sheep = r.world.sheep.get(id)!;
        // Kept either as a sheep that came up, or, still starting, because its pane would not close.
        const stuck = now.state === "starting" && r.world.paneOf(id) !== undefined;
        assert.ok(stuck || (sheep.ready && r.world.piAlive(sheep)), `attach kept ${id}, caught starting, though its pi is not up`);
        m.sheep.set(id, { label: now.label, closed: false, dropped: false, ...(stuck ? { failedStart: true } : {}) });
        continue;
      }
      const was = oldAgents.find((a) => a.agentId === id)!;
      for (const key of ["agent", "label", "paneId", "cwd", "sessionPath", "createdAt", "runtime", "model", "attachHint"] as const) {
        assert.deepStrictEqual(now[key], was[key], `${id}.${key} came back from the store as ${show(now[key])}, was ${show(was[key])}`);
      }
      if (!flaked && was.state !== "closed") assert.ok(r.world.paneOf(id), `attach kept ${id}, whose pane is gone`);
    }
    for (const p of oldPrompts) {
      if (!report.adopted.includes(p.agentId) || pruned.has(p.agentId)) continue;
      const now = r.shepherd.registry.prompts.get(p.promptId);
      assert.ok(now, `prompt ${p.promptId} was lost across the restart`);
      if (p.settled) assert.deepStrictEqual(now.settled, p.settled, `the result of ${p.promptId} changed across the restart`);
    }
  });
}

// --- what the world does by itself ---------------------------------------------------------

function userClosesSheepPane(k: number, witness: boolean): Cmd {
  return command(`world: user closes sheep pane #${k}${witness ? " (its pid is seen gone)" : ""}`, async (_m, r) => {
    const ours = new Set(r.world.prepared);
    const pane = pick(
      [...r.world.panes.values()].filter((p) => p.kind === "sheep" && p.mark && ours.has(p.mark)),
      k,
    );
    if (!pane) return;
    r.world.removePane(pane.paneId, witness);
    note(r, `world: pane ${pane.paneId} of ${pane.mark} closed from outside${r.world.panes.size === 0 ? "; the server ended" : ""}`);
  });
}

const worldCmds: fc.Arbitrary<Cmd>[] = [
  fc.record({ k: fc.nat(), witness: fc.boolean() }).map(({ k, witness }) => userClosesSheepPane(k, witness)),
  fc
    .record({
      k: fc.nat(),
      paneGoes: fc.boolean(),
      missed: fc.boolean(),
      exit: fc.constantFrom<[number | null, string | null]>([0, null], [1, null], [137, null], [null, "SIGABRT"], [null, "SIGKILL"]),
    })
    .map(({ k, paneGoes, missed, exit }) =>
      command(
        `world: pi ends in sheep #${k} (exit ${show(exit)}${paneGoes ? ", pane goes" : ""}${missed ? ", tmux misses its SIGCHLD" : ""})`,
        async (m, r) => {
          const id = pick(
            sheepIds(m, (_s, id) => r.world.piAlive(r.world.sheep.get(id)!)),
            k,
          );
          if (!id) return;
          r.world.crash(id, { code: exit[0], signal: exit[1] }, paneGoes, missed);
          note(r, `world: pi in ${id} ended${paneGoes ? " and its pane went" : ""}`);
        },
      ),
    ),
  fc.constant(null).map(() =>
    command("world: the tmux server dies", async (_m, r) => {
      r.world.serverDies();
      note(r, "world: the tmux server died");
    }),
  ),
  fc.record({ open: fc.boolean(), k: fc.nat() }).map(({ open, k }) =>
    command(open ? "world: user opens a pane" : `world: user closes their pane #${k}`, async (_m, r) => {
      if (open) return note(r, `world: user opened ${r.world.openUserPane().paneId}`);
      const pane = pick(
        [...r.world.panes.values()].filter((p) => p.kind === "user"),
        k,
      );
      if (!pane) return;
      r.world.removePane(pane.paneId, false);
      note(r, `world: user closed their ${pane.paneId}`);
    }),
  ),
  fc.constant(null).map(() =>
    command("world: a neighbouring shepherd starts a sheep", async (_m, r) => {
      const id = await r.world.addNeighbour();
      if (id) note(r, `world: neighbour's sheep ${id} on ${r.world.store.peek().agents.find((a) => a.agentId === id)!.paneId}`);
    }),
  ),
  fc.record({ op: fc.constantFrom(...FLAKY_OPS), n: fc.integer({ min: 1, max: 3 }) }).map(({ op, n }) =>
    command(`world: the next ${n} ${op} call(s) fail`, async (_m, r) => {
      r.world.failNext[op] += n;
      note(r, `world: next ${n} ${op} fail`);
    }),
  ),
  fc.constantFrom(500, 1500, 4000).map((ms) =>
    command(`world: ${ms} ms pass`, async (_m, r) => {
      await r.clock.advance(ms, ms);
      await quiesce();
    }),
  ),
  fc.nat().map((k) =>
    command(`close a neighbour's sheep #${k}`, async (_m, r) => {
      const id = pick(r.world.neighbourIds, k);
      if (!id) return;
      const paneId = r.world.store.peek().agents.find((a) => a.agentId === id)!.paneId;
      const had = r.world.panes.has(paneId);
      const out = await drive(r, outcome(r.shepherd.close(id)), "close");
      note(r, `close neighbour ${id} -> ${out.ok ? "ok" : firstLine(out.error)}`);
      assert.equal(out.ok ? "ok" : codeOf(out.error), "not_owned", "closing another shepherd's sheep was not refused");
      assert.equal(r.world.panes.has(paneId), had, "a neighbour's pane was touched");
    }),
  ),
];

// --- arbitraries ----------------------------------------------------------------------------

const bootArb: fc.Arbitrary<BootPlan> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(0, 300, 1500).map((afterMs): BootPlan => ({ kind: "ready", afterMs })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<[number | null, string | null]>([1, null], [null, "SIGSEGV"])
      .map(([code, signal]): BootPlan => ({ kind: "crash", afterMs: 200, code, signal })),
  },
  { weight: 1, arbitrary: fc.constant<BootPlan>({ kind: "never" }) },
  { weight: 1, arbitrary: fc.constantFrom(0, 200).map((afterMs): BootPlan => ({ kind: "vanish", afterMs })) },
);

const outcomeArb = fc.oneof(
  { weight: 5, arbitrary: fc.constant("completed" as const) },
  { weight: 1, arbitrary: fc.constant("failed" as const) },
  { weight: 1, arbitrary: fc.constant("cancelled" as const) },
  { weight: 1, arbitrary: fc.constant("never" as const) },
);

/** Sheep answer prompts after some steps of the test, or some time on the clock. */
const promptPlanArb: fc.Arbitrary<AnswerPlan> = fc.record({
  outcome: outcomeArb,
  afterSteps: fc.integer({ min: 0, max: 4 }),
  afterMs: fc.constantFrom(0, 700, 2500),
});

/** Delegated prompts must answer within their command: time, not steps. */
const delegatePlanArb: fc.Arbitrary<AnswerPlan> = fc.record({
  outcome: outcomeArb,
  afterSteps: fc.constant(0),
  afterMs: fc.constantFrom(0, 400, 6000),
});

const labelArb = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom("alpha", "beta", "worker-2") });
const timeoutArb = fc.constantFrom(0, 1, NOTICE_SEC, 5);
const picksArb = fc.array(fc.nat(), { minLength: 1, maxLength: 3 });
const unknownArb = fc.integer({ min: 0, max: 4 }).map((n) => n === 0);
const meanwhileArb = fc.option(
  fc.record({ afterMs: fc.constantFrom(500, 1500), what: fc.constantFrom("kill" as const, "crash" as const, "answer" as const) }),
  {
    nil: undefined,
    freq: 3,
  },
);

const startArb = fc
  .record({ label: labelArb, twin: fc.boolean(), plans: fc.tuple(bootArb, bootArb), isolate: fc.integer({ min: 0, max: 2 }).map((n) => n === 0) })
  .map((x) => startOp(x.label, x.twin, x.plans, x.isolate));
const resumeArb = fc.record({ k: fc.nat(), boot: bootArb }).map((x) => resumeOp(x.k, x.boot));
const promptArb = fc.record({ k: fc.nat(), plan: promptPlanArb }).map((x) => promptOp(x.k, x.plan));
const waitArb = fc
  .record({ picks: picksArb, unknown: unknownArb, timeoutSec: timeoutArb, meanwhile: meanwhileArb })
  .map((x) => waitOp(x.picks, x.unknown, x.timeoutSec, x.meanwhile));
const closeArb = fc.record({ k: fc.nat(), twice: fc.boolean() }).map((x) => closeOp(x.k, x.twice));
const statusArb = fc.nat().map(statusOp);
const delegateArb = fc
  .record({
    parallel: fc.boolean(),
    plans: fc.array(fc.record({ boot: bootArb, answer: delegatePlanArb }), { minLength: 1, maxLength: 3 }),
    keepOpen: fc.boolean(),
  })
  .map((x) => delegateOp(x.parallel, x.plans, x.keepOpen));
const restartArb = fc.option(fc.record({ boot: bootArb, ticks: fc.integer({ min: 0, max: 4 }) }), { nil: undefined }).map(restartCmd);

/** Calls pi may run together in one turn; small indices so both often touch the same sheep. */
const concurrentOpArb: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(bootArb, fc.boolean()).map(([boot, isolate]) => startOp(undefined, false, [boot], isolate)),
  fc.record({ k: fc.nat(3), boot: bootArb }).map((x) => resumeOp(x.k, x.boot)),
  fc.record({ k: fc.nat(3), plan: promptPlanArb }).map((x) => promptOp(x.k, x.plan)),
  fc
    .record({ picks: fc.array(fc.nat(3), { minLength: 1, maxLength: 2 }), timeoutSec: fc.constantFrom(1, NOTICE_SEC) })
    .map((x) => waitOp(x.picks, false, x.timeoutSec)),
  fc.nat(3).map((k) => closeOp(k, false)),
  fc.nat(3).map(statusOp),
  fc.constant(pruneOp),
  fc.constant(herdFromFilesOp),
);

const commandArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 5, arbitrary: startArb.map(single) },
  { weight: 3, arbitrary: resumeArb.map(single) },
  { weight: 5, arbitrary: promptArb.map(single) },
  { weight: 5, arbitrary: waitArb.map(single) },
  { weight: 3, arbitrary: closeArb.map(single) },
  { weight: 2, arbitrary: statusArb.map(single) },
  { weight: 1, arbitrary: fc.constant(herdOp).map(single) },
  { weight: 1, arbitrary: fc.constant(herdFromFilesOp).map(single) },
  { weight: 1, arbitrary: fc.constant(pruneOp).map(single) },
  { weight: 2, arbitrary: delegateArb.map(single) },
  { weight: 2, arbitrary: restartArb },
  { weight: 5, arbitrary: fc.tuple(concurrentOpArb, concurrentOpArb).map(([a, b]) => together(a, b)) },
  ...worldCmds.map((arbitrary, i) => ({ weight: i === 0 ? 4 : 1, arbitrary })),
);

// --- running --------------------------------------------------------------------------------

interface WorldOptions {
  /** Like tmux 3.3+ (the default): kept panes and exits reported by liveness; else like herdr. */
  reportsExit?: boolean;
  /** Liveness by pane id alone, as the adapters answered before the ownership mark counted. */
  judgeByPaneIdOnly?: boolean;
  /** How far calls running together may be shuffled; see ChaosWorld.maxJitter. */
  jitter?: number;
}

async function runCommands(worldSeed: number, failRate: number, cmds: Iterable<Cmd>, opts: WorldOptions = {}): Promise<void> {
  const clock = new FakeClock();
  const world = new ChaosWorld(clock, worldSeed);
  world.failRate = failRate;
  world.judgeByPaneIdOnly = opts.judgeByPaneIdOnly ?? false;
  world.maxJitter = opts.jitter ?? 0;
  world.reportsExit = opts.reportsExit ?? true;
  const real: Real = { world, clock, owner: "shepherd-1", generation: 1, trace: [], shepherd: undefined as unknown as Shepherd };
  real.shepherd = makeShepherd(real);
  const model: Model = { sheep: new Map(), prompts: new Map(), counter: 0 };
  try {
    await fc.asyncModelRun(() => ({ model, real }), cmds);
  } finally {
    real.shepherd.dispose();
  }
}

function property(replayPath: string | undefined) {
  return fc.asyncProperty(
    fc.integer({ min: 0, max: 0x7fffffff }),
    fc.constantFrom(0, 0, 0.02, 0.08),
    fc.constantFrom(0, 3, 12, 12),
    fc.constantFrom(true, true, false),
    fc.commands([commandArb], { maxCommands: 30, size: "max", ...(replayPath ? { replayPath } : {}) }),
    (worldSeed, failRate, jitter, reportsExit, cmds) => runCommands(worldSeed, failRate, cmds, { jitter, reportsExit }),
  );
}

type Failure = fc.RunDetailsFailureProperty<[number, number, number, boolean, Iterable<Cmd>]>;

function failureReport(out: Failure, seed: number): string {
  const [worldSeed, failRate, jitter, reportsExit, cmds] = out.counterexample;
  const replay = /replayPath="([^"]*)"/.exec(String(cmds))?.[1];
  const steps = [...cmds].map((c, i) => `  ${i + 1}. ${String(c)}`).join("\n");
  const env = `PI_SHEPHERD_SEED=${seed} PI_SHEPHERD_PATH=${JSON.stringify(out.counterexamplePath)}${replay ? ` PI_SHEPHERD_REPLAY=${JSON.stringify(replay)}` : ""}`;
  return [
    `The model-based test of the core failed (seed ${seed}, run ${out.numRuns}, shrunk ${out.numShrinks} times).`,
    `Replay exactly: ${env} npx node --import tsx --test test/unit/core/model-based.test.ts`,
    `World: seed ${worldSeed}, random failure rate ${failRate}, jitter ${jitter}, ${reportsExit ? "exits reported by the multiplexer (tmux 3.3+)" : "exits reported by exit.json (herdr)"}. Smallest failing sequence:`,
    steps,
    "",
    out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance),
  ].join("\n");
}

const SEED = process.env.PI_SHEPHERD_SEED ? Number(process.env.PI_SHEPHERD_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
const RUNS = Number(process.env.PI_SHEPHERD_RUNS ?? 6000);

describe("model-based: the core against a multiplexer that misbehaves like real ones", () => {
  it(`random sequences keep every promise (seed ${SEED}, ${RUNS} runs; PI_SHEPHERD_SEED=${SEED} replays)`, { timeout: 10 * 60_000 }, async () => {
    const path = process.env.PI_SHEPHERD_PATH;
    const out = await fc.check(property(process.env.PI_SHEPHERD_REPLAY), { seed: SEED, numRuns: RUNS, ...(path ? { path } : {}) });
    if (!out.failed) return;
    assert.fail(out.counterexample ? failureReport(out as Failure, SEED) : (fc.defaultReportMessage(out) ?? "the property failed"));
  });

  it("would have caught a resumed isolated sheep that state.json does not hold (lost on /reload with its worktree)", async () => {
    await runCommands(1, 0, [
      single(startOp(undefined, false, [{ kind: "ready", afterMs: 0 }], true)),
      single(closeOp(0, false)),
      single(resumeOp(0, { kind: "ready", afterMs: 0 })),
      single(resumeOp(1, { kind: "ready", afterMs: 0 })),
      single(herdOp),
    ]);
  });

  it("would have caught liveness judged by pane id alone (a new tmux server's %0 is not our old sheep)", async () => {
    const sequence = () => [
      single(startOp(undefined, false, [{ kind: "ready", afterMs: 0 }])),
      single(promptOp(0, { outcome: "never", afterSteps: 0, afterMs: 0 })),
      userClosesSheepPane(0, false),
      single(startOp(undefined, false, [{ kind: "ready", afterMs: 0 }])),
      single(waitOp([0], false, NOTICE_SEC)),
      single(statusOp(0)),
    ];
    await runCommands(1, 0, sequence());
    await assert.rejects(runCommands(1, 0, sequence(), { judgeByPaneIdOnly: true }), (e: Error) => {
      assert.match(e.message, /wait reported p_\w+ still working to its deadline, but its sheep's pane is gone/);
      assert.match(e.message, /start -> a_\w+ "worker-2" %0/, "the second sheep got the first one's pane id");
      return true;
    });
  });
});
