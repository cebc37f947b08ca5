import type { Clock } from "../../src/core/herd/clock.ts";

/** A clock that moves only when the test says so. */
export class FakeClock implements Clock {
  private t = Date.parse("2026-01-01T00:00:00Z");
  private timers: { at: number; fire: () => void }[] = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = {
        at: this.t + ms,
        fire: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.timers = this.timers.filter((x) => x !== timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  /** Moves time forward in steps, letting every woken task run before the next step. */
  async advance(ms: number, step = 100): Promise<void> {
    const end = this.t + ms;
    while (this.t < end) {
      this.t = Math.min(end, this.t + step);
      const due = this.timers.filter((x) => x.at <= this.t);
      this.timers = this.timers.filter((x) => x.at > this.t);
      for (const x of due) x.fire();
      await settle();
    }
  }

  /**
   * Jumps to the earliest pending timer and fires every timer due then, without settling:
   * a test that drives many sleepers skips the quiet time between them. False when none waits.
   */
  fireNext(): boolean {
    if (this.timers.length === 0) return false;
    this.t = Math.max(this.t, Math.min(...this.timers.map((x) => x.at)));
    const due = this.timers.filter((x) => x.at <= this.t);
    this.timers = this.timers.filter((x) => x.at > this.t);
    for (const x of due) x.fire();
    return true;
  }
}

/** Lets pending promise chains run to their next real wait. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
