import type { ExitStatus, PaneLiveness, PaneRef, Runtime } from "../../ports/runtime.ts";
import type { SheepSnapshot } from "../../ports/sheep-files.ts";
import type { Clock } from "./clock.ts";
import { WOKEN } from "./signals.ts";

/**
 * How pi ended, by the best witness: its exit report, else the multiplexer that kept its pane,
 * else only that its pid is gone.
 */
export function howEnded(snap: SheepSnapshot, live: PaneLiveness | undefined): ExitStatus | undefined {
  if (snap.exited && !snap.exited.inferred) return snap.exited;
  return live?.state === "exited" ? live.exit : snap.exited;
}

/** How long a caller with a recent "alive" waits for a fresher answer before using it. */
const PATIENCE_MS = 10;

/** Intervals an "alive" is kept while the sheep's pid still runs, before the multiplexer is asked again. */
const WITNESSED_INTERVALS = 5;

/**
 * Sheep liveness for every waiter through one multiplexer call per interval: many waits on many
 * sheep share a single batched question instead of each polling the CLI. Keyed by agentId, never
 * by pane id: pane ids are reused, an agent id never is, and the runtime answers "alive" only for
 * a pane that still carries the agent's mark. That is also why "gone" may be kept for good.
 */
/** One question to the multiplexer on its way: the sheep it covers, and when it was asked. */
interface Question {
  group: string | undefined;
  ids: ReadonlySet<string>;
  at: number;
  done: Promise<void>;
}

export class LivenessMonitor {
  private cache = new Map<string, { value: PaneLiveness; at: number }>();
  /** The panes of the sheep asked about, so one refresh can cover every watched sheep. */
  private readonly panes = new Map<string, string>();
  /**
   * Questions on their way. A later caller joins one that covers it, or asks beside it: it never
   * waits for one to end first, so a question stuck on a silent machine holds up nobody else.
   */
  private readonly inflight = new Set<Question>();

  constructor(
    private readonly runtime: Runtime,
    private readonly clock: Clock,
    readonly intervalMs: number,
    /** Whether the sheep's pi still runs, by its pid (a system call); undefined when unknown. */
    private readonly running: (agentId: string) => boolean | undefined = () => undefined,
    /**
     * The machine a sheep runs on (undefined: this one). Sheep of one machine share a question;
     * those of another are asked apart, so one machine's silence never delays another's answer.
     */
    private readonly machineOf: (agentId: string) => string | undefined = () => undefined,
  ) {}

  /**
   * "alive" or "exited" no older than maxAgeMs, or "gone" (final); undefined when the multiplexer
   * could not say. A caller answered within the last two intervals waits at most PATIENCE_MS
   * for the new answer and otherwise keeps the old one: a waiter stuck in a slow multiplexer call
   * cannot see a result land, and the call goes on to serve its next look.
   */
  async get(pane: PaneRef, maxAgeMs = this.intervalMs): Promise<PaneLiveness | undefined> {
    const asked = this.clock.now();
    this.panes.set(pane.agentId, pane.paneId);
    const cached = this.cache.get(pane.agentId);
    if (cached && (cached.value.state === "gone" || asked - cached.at < maxAgeMs)) return cached.value;
    // A pi whose pid still runs has not ended, and its pane is there (closing a pane ends the pi
    // in it): one spawn of the multiplexer a second would only say so again. Now and then it
    // is asked all the same, for what the pid cannot tell (a pid taken over, a missed SIGCHLD).
    if (cached?.value.state === "alive" && maxAgeMs > 0 && asked - cached.at < WITNESSED_INTERVALS * maxAgeMs && this.running(pane.agentId) === true)
      return cached.value;
    const refreshed = this.refresh([pane.agentId], asked - maxAgeMs);
    if (cached && maxAgeMs > 0 && asked - cached.at < 2 * maxAgeMs) {
      await this.race(refreshed, PATIENCE_MS);
      return this.cache.get(pane.agentId)?.value ?? cached.value;
    }
    await refreshed;
    return this.cache.get(pane.agentId)?.value;
  }

  /**
   * get(), waited for no longer than patienceMs: undefined when the multiplexer has not answered by
   * then. A waiter reads the sheep's own files and its pid witness meanwhile instead of hanging on
   * the multiplexer call's own deadline (a herdr CLI stuck for 20 s held a killed sheep's wait so).
   * The question goes on, and a later caller joins it.
   */
  async within(pane: PaneRef, patienceMs: number): Promise<PaneLiveness | undefined> {
    return this.answerWithin(this.get(pane), patienceMs);
  }

  /** A fresh answer from the multiplexer, not one from the cache. */
  async fresh(pane: PaneRef): Promise<PaneLiveness | undefined> {
    const cached = this.cache.get(pane.agentId);
    if (cached?.value.state !== "gone") this.cache.delete(pane.agentId);
    return this.get(pane, 0);
  }

  /**
   * Fresh answers for many sheep from one question: a herd's status asked sheep by sheep would
   * ask again for every sheep whose turn came a millisecond after the last question, and each
   * question is a multiplexer process spawned from the shepherd (at 64 sheep, several).
   */
  freshAll(panes: readonly PaneRef[]): ReadonlyMap<string, Promise<void>> {
    const byGroup = new Map<string | undefined, string[]>();
    for (const pane of panes) {
      this.panes.set(pane.agentId, pane.paneId);
      if (this.cache.get(pane.agentId)?.value.state === "gone") continue;
      this.cache.delete(pane.agentId);
      const group = this.machineOf(pane.agentId);
      const ids = byGroup.get(group) ?? [];
      ids.push(pane.agentId);
      byGroup.set(group, ids);
    }
    // One question per machine, each awaited only by that machine's sheep: a silent host holds up no other's status.
    const asked = this.clock.now();
    const out = new Map<string, Promise<void>>();
    for (const ids of byGroup.values()) {
      const done = this.refresh(ids, asked);
      for (const id of ids) out.set(id, done);
    }
    return out;
  }

  /** The answer kept for a sheep, however old (a "gone" included); undefined when none is. */
  kept(agentId: string): PaneLiveness | undefined {
    return this.cache.get(agentId)?.value;
  }

  /**
   * The pid the sheep reported is gone while the multiplexer says its program runs: that answer
   * is stale (tmux can miss a SIGCHLD until the next one), so ask once more before anyone settles
   * for the pid witness's guess of how pi ended.
   */
  async unlessStale(pane: PaneRef, snap: SheepSnapshot, live: PaneLiveness | undefined, patienceMs?: number): Promise<PaneLiveness | undefined> {
    if (!(snap.exited?.inferred && live?.state === "alive")) return live;
    if (patienceMs === undefined) return this.fresh(pane);
    // Past its patience the pid witness speaks: it has seen pi gone longer than a multiplexer needs.
    return this.answerWithin(this.fresh(pane), patienceMs);
  }

  /** What a runtime saw itself: the pane is gone (for good, as every "gone"). */
  gone(agentId: string): void {
    this.cache.set(agentId, { value: { state: "gone" }, at: this.clock.now() });
  }

  /** Stops asking about a sheep that is no longer ours to watch. */
  forget(agentId: string): void {
    this.cache.delete(agentId);
    this.panes.delete(agentId);
  }

  /**
   * Asks the multiplexer about agentIds (and every watched sheep of their machine), or joins a
   * question on its way when that one covers them and was asked no earlier than `since`: one
   * asked before a pane died would answer "alive" to a caller that asked after (a warm sheep
   * killed from outside was handed out so). A question it cannot join it does not wait for.
   */
  private async refresh(agentIds: string[], since: number): Promise<void> {
    const group = this.machineOf(agentIds[0]!);
    for (const q of this.inflight) {
      if (q.group === group && q.at >= since && agentIds.every((id) => q.ids.has(id))) return q.done;
    }
    const ids = new Set([...this.watched().filter((id) => this.machineOf(id) === group), ...agentIds]);
    const refs: PaneRef[] = [...ids].map((agentId) => ({ agentId, paneId: this.panes.get(agentId)! }));
    // An answer is as old as its question: dating it by the reply would let a slow
    // multiplexer stretch the interval between questions by its own latency.
    const at = this.clock.now();
    const done = (async () => {
      try {
        const result = await this.runtime.liveness(refs);
        for (const [id, value] of result) {
          const had = this.cache.get(id);
          // Questions overlap now: an older one answering late never undoes a newer answer, nor a "gone".
          if (had && (had.value.state === "gone" || had.at > at)) continue;
          this.cache.set(id, { value, at });
        }
      } catch {
        // a transient failure is not "gone": leave the cache alone and ask again next time
      }
    })();
    const q: Question = { group, ids, at, done };
    this.inflight.add(q);
    try {
      await done;
    } finally {
      this.inflight.delete(q);
    }
  }

  /** What `work` answers within ms, else undefined; the work goes on. */
  private async answerWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
    let answer: T | undefined;
    await this.race(
      work.then((v) => {
        answer = v;
      }),
      ms,
    );
    return answer;
  }

  private async race(work: Promise<void>, ms: number): Promise<void> {
    const stop = new AbortController();
    try {
      await Promise.race([work, this.clock.sleep(ms, stop.signal).catch(() => undefined)]);
    } finally {
      stop.abort(WOKEN);
    }
  }

  /** Sheep not yet seen gone are refreshed together, so one call serves all waiters. */
  private watched(): string[] {
    return [...this.cache].filter(([, v]) => v.value.state !== "gone").map(([id]) => id);
  }
}
