/** Sheep a delegation is done with, released off its path: quit and dispose wait for them. */
import type { AgentId } from "../../domain/ids.ts";
import type { Herd } from "../herd/herd.ts";
import type { StartRequest } from "../../ports/types.ts";
import { close } from "./close.ts";
import type { WarmPool } from "./warm.ts";

export class Releases {
  /** Closes of delegated sheep running after their delegation returned. */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly herd: Herd,
    private readonly pool: WarmPool,
  ) {}

  /** Back to the warm pool when it takes the sheep (WarmPool.giveBack), else closed; a close that fails keeps the record. */
  release(agentId: AgentId, started?: StartRequest): void {
    const rec = this.herd.registry.agents.get(agentId);
    const done = (rec && started ? this.pool.giveBack(rec, started).catch(() => false) : Promise.resolve(false))
      .then((back) => (back ? undefined : close(this.herd, agentId)))
      .catch(() => undefined)
      .finally(() => this.running.delete(done));
    this.running.add(done);
  }

  /** Every release made so far has finished (its sheep closed, or its close failed). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
