import type { PaneLiveness, Runtime } from "../ports/runtime.js";
import type { Clock } from "./clock.js";

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

  /** Liveness no older than the interval; undefined when the multiplexer could not say. */
  async get(paneId: string, maxAgeMs = this.intervalMs): Promise<PaneLiveness | undefined> {
    const cached = this.cache.get(paneId);
    if (cached && (cached.value === "gone" || this.clock.now() - cached.at < maxAgeMs)) return cached.value;
    await this.refresh([paneId]);
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
      try {
        const result = await this.runtime.liveness(ids);
        const at = this.clock.now();
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

  /** Panes asked about before are refreshed together, so one call serves all waiters. */
  private watched(): string[] {
    return [...this.cache].filter(([, v]) => v.value === "alive").map(([id]) => id);
  }
}
