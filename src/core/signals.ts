import type { Clock } from "./clock.js";

/**
 * Wake-ups per agent: the sheep host and the core's own transitions (close, settle) ring the
 * bell, and every loop waiting on that agent re-reads the truth instead of trusting the event.
 */
export class Bells {
  private readonly listeners = new Map<string, Set<() => void>>();

  ring(agentId: string): void {
    for (const fn of this.listeners.get(agentId) ?? []) fn();
  }

  /**
   * Resolves on the next ring of any of the agents or after ms; rejects when the signal aborts.
   * A ring that arrives before this is called is not remembered, so callers re-read state first.
   */
  async next(agentIds: readonly string[], ms: number, clock: Clock, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    const stop = new AbortController();
    const onRing = () => stop.abort();
    const onAbort = () => stop.abort();
    for (const id of agentIds) {
      let set = this.listeners.get(id);
      if (!set) this.listeners.set(id, (set = new Set()));
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
