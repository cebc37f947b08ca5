import type { Clock } from "./clock.ts";

const MAX_UNHEARD = 1024;

/** Why a wake-up stops a sleep: made once, where abort() without a reason builds a DOMException, stack and all, each time. */
export const WOKEN = new Error("woken");

/**
 * Wake-ups per agent: the sheep-files port and the core's own transitions (close, settle) ring the
 * bell, and every loop waiting on that agent re-reads the truth instead of trusting the event.
 */
export class Bells {
  private readonly listeners = new Map<string, Set<() => void>>();
  /**
   * Agents that rang while no loop listened. A loop re-reads state and then calls next(); a ring
   * in that gap (a result landing while the loop awaited a file read or the multiplexer) would
   * otherwise be lost and the loop would sleep a whole interval with the answer on disk.
   */
  private readonly unheard = new Set<string>();
  /** Hear every ring without taking one from a loop in next(): a ring is not used up by them. */
  private readonly overhearers = new Set<(agentId?: string) => void>();

  overhear(fn: (agentId?: string) => void): () => void {
    this.overhearers.add(fn);
    return () => this.overhearers.delete(fn);
  }

  /** Tells only the overhearers that something changed that is no sheep's doing (a wait ended). */
  nudge(): void {
    for (const fn of this.overhearers) fn();
  }

  ring(agentId: string): void {
    for (const fn of this.overhearers) fn(agentId);
    const set = this.listeners.get(agentId);
    if (!set || set.size === 0) {
      this.unheard.delete(agentId);
      this.unheard.add(agentId);
      // Bounded: forgetting a very old unheard ring costs at most one interval, never correctness.
      for (const old of this.unheard) {
        if (this.unheard.size <= MAX_UNHEARD) break;
        this.unheard.delete(old);
      }
      return;
    }
    for (const fn of set) fn();
  }

  /**
   * Resolves on the next ring of any of the agents (true) or after ms (false); rejects when the
   * signal aborts. A ring that nobody heard since the last call resolves it at once: callers
   * re-read state after every ring, so waking early costs one read, while a lost ring cost a
   * whole wait. After a quiet interval no file changed, so a caller need not read them again.
   */
  async next(agentIds: readonly string[], ms: number, clock: Clock, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) throw signal.reason;
    let missed = false;
    for (const id of agentIds) if (this.unheard.delete(id)) missed = true;
    if (missed) return true;
    const stop = new AbortController();
    let rang = false;
    const onRing = () => {
      rang = true;
      stop.abort(WOKEN);
    };
    const onAbort = () => stop.abort(WOKEN);
    for (const id of agentIds) {
      const set = this.listeners.get(id) ?? new Set<() => void>();
      this.listeners.set(id, set);
      set.add(onRing);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await clock.sleep(Math.max(0, ms), stop.signal);
    } catch {
      // rung or aborted: fall through to the abort check below
    } finally {
      signal?.removeEventListener("abort", onAbort);
      for (const id of agentIds) {
        const set = this.listeners.get(id);
        set?.delete(onRing);
        if (set?.size === 0) this.listeners.delete(id);
      }
    }
    if (signal?.aborted) throw signal.reason;
    return rang;
  }
}

/** Calls fn every ms on the given clock until the returned stop function is called. */
export function every(clock: Clock, ms: number, fn: () => void): () => void {
  const stop = new AbortController();
  void (async () => {
    for (;;) {
      try {
        await clock.sleep(ms, stop.signal);
      } catch {
        return;
      }
      fn();
    }
  })();
  return () => stop.abort();
}
