import type { PaneLiveness, Runtime } from "../ports/runtime.js";
import type { Clock } from "./clock.js";

/** How long a caller with a recent "alive" waits for a fresher answer before using it. */
const PATIENCE_MS = 10;

/**
 * Pane liveness for every waiter through one multiplexer call per interval: many waits on many
 * sheep share a single batched question instead of each polling the CLI.
 */
export class LivenessMonitor {
  private cache = new Map<string, { value: PaneLiveness; at: number }>();
  private inflight?: Promise<void>;
  private inflightIds = new Set<string>();

  constructor(
    private readonly runtime: Runtime,
    private readonly clock: Clock,
    readonly intervalMs: number,
  ) {}

  /**
   * Liveness no older than the interval; undefined when the multiplexer could not say. A caller
   * that was told "alive" within the last two intervals waits at most PATIENCE_MS for the new
   * answer and otherwise keeps the old one: a waiter stuck in a slow multiplexer call cannot
   * see a result land, and the call goes on to serve its next look.
   */
  async get(paneId: string, maxAgeMs = this.intervalMs): Promise<PaneLiveness | undefined> {
    const cached = this.cache.get(paneId);
    if (cached && (cached.value === "gone" || this.clock.now() - cached.at < maxAgeMs)) return cached.value;
    const refreshed = this.refresh([paneId]);
    if (cached && maxAgeMs > 0 && this.clock.now() - cached.at < 2 * maxAgeMs) {
      await this.within(refreshed, PATIENCE_MS);
      return this.cache.get(paneId)?.value ?? cached.value;
    }
    await refreshed;
    return this.cache.get(paneId)?.value;
  }

  /** Forgets what is known so the next question asks the multiplexer. */
  invalidate(paneId: string): void {
    this.cache.delete(paneId);
  }

  private async refresh(paneIds: string[]): Promise<void> {
    if (this.inflight) {
      const missing = paneIds.filter((id) => !this.inflightIds.has(id));
      await this.inflight;
      if (missing.length === 0) return;
    }
    this.inflightIds = new Set([...this.watched(), ...paneIds]);
    const ids = [...this.inflightIds];
    this.inflight = (async () => {
      // An answer is as old as its question: dating it by the reply would let a slow
      // multiplexer stretch the interval between questions by its own latency.
      const at = this.clock.now();
      try {
        const result = await this.runtime.liveness(ids);
        for (const [id, value] of result) this.cache.set(id, { value, at });
      } catch {
        // a transient failure is not "gone": leave the cache alone and ask again next time
      }
    })();
    try {
      await this.inflight;
    } finally {
      this.inflight = undefined;
    }
  }

  private async within(work: Promise<void>, ms: number): Promise<void> {
    const stop = new AbortController();
    try {
      await Promise.race([work, this.clock.sleep(ms, stop.signal).catch(() => undefined)]);
    } finally {
      stop.abort();
    }
  }

  /** Panes asked about before are refreshed together, so one call serves all waiters. */
  private watched(): string[] {
    return [...this.cache].filter(([, v]) => v.value === "alive").map(([id]) => id);
  }
}
