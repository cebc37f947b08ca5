import { markTold, notDone, stamped, type AuditInput } from "../../ports/audit.ts";
import { DEFAULTS, type HerdOptions, type ShepherdOptions, stripUndefined } from "./options.ts";

import { MAX_CLOSED_KEPT, MAX_DELIVERED_DELEGATIONS_KEPT, MAX_SETTLED_KEPT } from "../../domain/bounds.ts";
import { systemClock, type Clock } from "./clock.ts";
import { errorText, ShepherdError, shorten } from "../../domain/errors.ts";
import { LivenessMonitor } from "./liveness.ts";
import { Registry } from "./registry.ts";
import { Bells } from "./signals.ts";
import { StateReports } from "./state-reports.ts";
import { HerdSpend } from "./spend.ts";
import { currentEdge } from "./edge.ts";
import { UsageTally, type UsageTotals } from "./usage-tally.ts";
import type { AgentRecord, AgentState, PromptRecord, StartRequest, WaitItem } from "../../ports/types.ts";
import { budgetNotice, type PublishedSheep, type PublishInput, publishTo } from "./publish.ts";
import { dayOf } from "../../domain/budget.ts";
import { Holds } from "./holds.ts";

export type { HerdOptions, ShepherdOptions } from "./options.ts";
export type { UsageTotals } from "./usage-tally.ts";

/** A settled prompt that still owes the conversation its result (a push, or its delegation's). */
export function owesDelivery(herd: { registry: Registry }, p: PromptRecord): boolean {
  if (p.notify && !p.delivered) return true;
  if (!p.delegationId) return false;
  const d = herd.registry.delegations.get(p.delegationId);
  return d !== undefined && !d.delivered;
}

/** Where a start looks for a ready sheep before it boots one (the warm pool). */
export interface WarmSource {
  /** A ready, live sheep started for exactly this request, now the caller's; undefined when none matches. */
  take(req: StartRequest, signal?: AbortSignal): Promise<AgentRecord | undefined>;
}

/**
 * The state every job of the core shares: the records, the bells that wake waiters, the clock,
 * liveness, the file watches, and writing the records through to the store.
 */
export class Herd {
  readonly registry = new Registry();
  readonly bells = new Bells();
  readonly clock: Clock;
  readonly liveness: LivenessMonitor;
  readonly opts: HerdOptions;
  /** What a sandboxed sheep cannot tell its multiplexer itself. */
  readonly stateReports: StateReports;
  /** The herd's spend against the budgets: reservations, each sheep's total, the day's ledger (spec: Budgets). */
  readonly spend: HerdSpend;
  private readonly watches = new Map<string, () => void>();
  /** Prompts being settled (evidence takes a moment): everyone asking meanwhile gets the same outcome. */
  readonly settling = new Map<string, Promise<WaitItem>>();
  /**
   * Sheep a close is ending right now: their panes go before their prompts are cancelled, and a
   * look meanwhile must leave the prompt to the close rather than call it a pane that went.
   */
  readonly closing = new Set<string>();
  /** The tail of each sheep's queue of exclusive operations. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Records dropped from the registry: the store must drop them too, even under an old owner. */
  private readonly forgotten = new Set<string>();
  /**
   * Prompts and sheep a wait is watching right now: their results and questions go back through
   * that wait, so nothing pushes them into the conversation meanwhile.
   */
  readonly waiting = new Holds();
  /** Questions a wait returned (as blocked): the model saw them, they are not pushed again. */
  readonly claimedQuestions = new Set<string>();
  /** Aborted when this shepherd is disposed (a reload): background work stops where it is. */
  readonly lifetime = new AbortController();
  /** After dispose nothing is written: the reloaded shepherd owns the records now. */
  private closedForWrites = false;
  /** Set by the warm pool when one is configured. */
  warm: WarmSource | undefined;
  /** Told after each change of the records is written through (or would be, without a store): edges that show them live. */
  private readonly recordListeners = new Set<() => void>();
  /** What the herd spent, closed sheep and forgotten prompts included: it never shrinks (kept in state.json). */
  readonly tally = new UsageTally();

  constructor(options: ShepherdOptions) {
    this.opts = { ...DEFAULTS, ...stripUndefined(options) } as HerdOptions;
    this.clock = options.clock ?? systemClock;
    const host = options.files;
    const registry = this.registry;
    this.liveness = new LivenessMonitor(
      options.runtime,
      this.clock,
      this.opts.livenessIntervalMs,
      (agentId) => host.running?.(agentId),
      (agentId) => (registry.agents.get(agentId) ?? registry.warm.get(agentId))?.host,
    );
    this.spend = new HerdSpend({
      ...(options.ledger ? { ledger: options.ledger } : {}),
      ...(options.budgets ? { daily: options.budgets } : {}),
      clock: this.clock,
      audit: (e) => {
        this.audit(e);
        const notice = budgetNotice(e, dayOf(this.clock.now()));
        if (notice) this.publish(e.agentId ? this.registry.agents.get(e.agentId) : undefined, notice);
      },
      ...(options.onWarning ? { warn: options.onWarning } : {}),
    });
    this.stateReports = new StateReports(options.runtime, this.clock, options.onWarning, (agentId) => this.closing.has(agentId));
  }

  /**
   * Runs fn when every earlier exclusive operation on this sheep has ended. prompt, close and
   * dropping a gone sheep change the same record across awaits; interleaved, a prompt could
   * revive a sheep that a close had just ended.
   */
  exclusive<T>(agentId: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(agentId) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(agentId, tail);
    void tail.then(() => {
      if (this.queues.get(agentId) === tail) this.queues.delete(agentId);
    });
    return run;
  }

  /** An exclusive turn on a sheep held across steps that are not one function: resolves with its release. */
  hold(agentId: string): Promise<() => void> {
    return new Promise((held) => {
      void this.exclusive(agentId, () => new Promise<void>((release) => held(release)));
    });
  }

  /**
   * Every change of a sheep's state goes through here: a change starts the state's clock
   * (`stateSince`, what the panel counts "For" from); setting the state it already has keeps it.
   */
  setState(rec: AgentRecord, state: AgentState): void {
    if (rec.state === state) return;
    rec.state = state;
    rec.stateSince = new Date(this.clock.now()).toISOString();
    this.stateReports.changed(rec);
    // A sheep that ended spends no more: its reservation of the day is let go, its spend stays counted.
    if ((state === "closed" || state === "exited") && !rec.warm) this.spend.closed(rec);
  }

  /** Tells the person's channels what a sheep needs (ports/events.ts); see publish.ts. */
  publish = (rec: PublishedSheep, event: PublishInput): void => publishTo(this.opts.events, this.clock.now(), rec, event);

  /** Rings the sheep's bell whenever its files change, until unwatch. */
  watch(agentId: string): void {
    this.watches.set(
      agentId,
      this.opts.files.subscribe(agentId, () => this.bells.ring(agentId)),
    );
  }

  unwatch(agentId: string): void {
    this.watches.get(agentId)?.();
    this.watches.delete(agentId);
  }

  unwatchAll(): void {
    for (const off of this.watches.values()) off();
    this.watches.clear();
  }

  /** Tells the audit sink, stamped with the time, this shepherd and the edge it came from; never throws. */
  audit(input: AuditInput): void {
    const sink = this.opts.audit;
    if (!sink) return;
    try {
      const event: AuditInput = { ...input, edge: input.edge ?? currentEdge() };
      // Every event about a remote sheep names its host, whichever room told it.
      const rec =
        event.agentId !== undefined && event.host === undefined
          ? (this.registry.agents.get(event.agentId) ?? this.registry.warm.get(event.agentId))
          : undefined;
      sink.record(stamped(rec?.host !== undefined ? { ...event, host: rec.host } : event, this.opts.owner, this.clock.now()));
    } catch {
      // a record of what happened must never change what happens
    }
  }

  /**
   * Runs an action on one sheep; its refusal or failure is told here, with the sheep's id and
   * label, which the tool's entry no longer knows (and it tells the error no second time).
   */
  async audited<T>(action: string, rec: Pick<AgentRecord, "agentId" | "label">, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      this.audit({ ...notDone(action, e instanceof ShepherdError ? e.code : "error", shorten(errorText(e))), agentId: rec.agentId, label: rec.label });
      markTold(e);
      throw e;
    }
  }

  /** Drops a record and its prompts here and, at the next persist, from the store. */
  forget(rec: AgentRecord): void {
    // Its prompts are counted before they go: the herd's totals keep what it spent.
    this.tally.see(this.registry.prompts.values(), this.clock.now());
    if (rec.state !== "closed" && rec.state !== "exited" && !rec.warm) this.spend.closed(rec);
    this.registry.agents.delete(rec.agentId);
    this.registry.warm.delete(rec.agentId);
    this.forgotten.add(rec.agentId);
    this.liveness.forget(rec.agentId);
    for (const [id, p] of this.registry.prompts) if (p.agentId === rec.agentId) this.registry.prompts.delete(id);
  }

  /** A record of another shepherd that this one lets go of in the store without ever holding it. */
  letGo(agentId: string): void {
    this.forgotten.add(agentId);
  }

  /**
   * Writes the records through; a burst of changes becomes one write. A failed write never
   * fails the call that changed the records: the store retries with the next change and warns.
   */
  persist(): Promise<void> {
    this.tally.see(this.registry.prompts.values(), this.clock.now());
    this.bound();
    this.tellRecordListeners();
    const store = this.opts.store;
    if (!store || this.closedForWrites) return Promise.resolve();
    // The warm pool's sheep are written too: a crashed shepherd's pool is found and closed by the next.
    const agents = [...this.registry.agents.values(), ...this.registry.warm.values()];
    const ids = new Set<string>(agents.map((a) => a.agentId));
    const prompts = [...this.registry.prompts.values()].filter((p) => ids.has(p.agentId));
    const forgotten = [...this.forgotten].filter((id) => !ids.has(id));
    const delegations = [...this.registry.delegations.values()].map((d) => ({ ...d, items: d.items.map((i) => ({ ...i })) }));
    const owner = this.opts.owner;
    return store
      .save(owner, {
        agents: agents.map((a) => ({ ...a, ...(a.queue ? { queue: [...a.queue] } : {}) })),
        prompts: prompts.map((p) => ({ ...p })),
        delegations,
        forgotten,
        // Written with the records in one file: every settled prompt written is in the tally.
        ...this.tally.stored(owner, this.clock.now()),
      })
      .catch(() => undefined);
  }

  /** What this shepherd's herd spent, in all and today: every prompt that settled, whether its records are kept or not. */
  usage(): UsageTotals {
    this.tally.see(this.registry.prompts.values(), this.clock.now());
    return this.tally.totals(this.clock.now());
  }

  /** Calls fn after every change of the records (each persist), until the returned function is called. */
  onRecords(fn: () => void): () => void {
    this.recordListeners.add(fn);
    return () => this.recordListeners.delete(fn);
  }

  private tellRecordListeners(): void {
    for (const fn of this.recordListeners) {
      try {
        fn();
      } catch {
        // a view of the records must never change what happens to them
      }
    }
  }

  get disposed(): boolean {
    return this.lifetime.signal.aborted;
  }

  /** Stops background work; after the final write (closeWrites) nothing more is written. */
  stopBackground(): void {
    this.lifetime.abort(new Error("the shepherd was reloaded or shut down"));
  }

  closeWrites(): void {
    this.closedForWrites = true;
  }

  /**
   * What a long session keeps is bounded: the newest closed sheep (so their ids still answer
   * "closed"; those that kept a worktree all stay) and, per sheep, every unsettled prompt and the newest settled ones. An id that
   * fell out answers as unknown.
   */
  private bound(): void {
    // Maps keep insertion order, which is creation and submission order: newest last. (Times
    // would tie within a millisecond.)
    // A closed sheep that kept its worktree is not history but the way to its work: never dropped.
    const closed = [...this.registry.agents.values()].filter((a) => a.state === "closed" && !a.worktree);
    for (const rec of closed.slice(0, Math.max(0, closed.length - MAX_CLOSED_KEPT))) this.forget(rec);
    const settled = new Map<string, string[]>();
    for (const p of this.registry.prompts.values()) {
      // A result still owed to the conversation is kept until it went out.
      if (!p.settled || owesDelivery(this, p)) continue;
      const list = settled.get(p.agentId) ?? [];
      list.push(p.promptId);
      settled.set(p.agentId, list);
    }
    for (const list of settled.values()) {
      for (const id of list.slice(0, Math.max(0, list.length - MAX_SETTLED_KEPT))) this.registry.prompts.delete(id);
    }
    const delivered = [...this.registry.delegations.values()].filter((d) => d.delivered);
    for (const d of delivered.slice(0, Math.max(0, delivered.length - MAX_DELIVERED_DELEGATIONS_KEPT))) this.registry.delegations.delete(d.delegationId);
  }
}
