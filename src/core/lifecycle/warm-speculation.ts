/**
 * Sheep booted for a call the shepherd's model is still writing (issue 36): while the model
 * streams a `shepherd` call that will start sheep, the pool boots matching ones with no task, and
 * the call, when it runs, takes them (waiting for one still booting rather than boot its own).
 * Nothing of the call runs early; a call that turns out different or never runs leaves them to
 * the pool's rules.
 */
import { WARM_SHEEP_MB } from "../../domain/bounds.ts";
import { actingFrom } from "../herd/edge.ts";
import type { Herd } from "../herd/herd.ts";
import type { AgentDefinition, StartRequest } from "../../ports/types.ts";
import { fingerprint, type WarmConfig } from "./warm-fit.ts";
import { poolMb } from "./warm-memory.ts";
import type { PoolMarks } from "./warm-renewal.ts";

/** A start a streaming call is about to ask for: this many sheep of this definition (and model). */
export interface SpeculativeWant {
  name: string;
  count: number;
  model?: string;
}

/** At most this many sheep are booted ahead for one definition, whatever a call names. */
export const MAX_SPECULATIVE_PER_NAME = 8;

interface Boot {
  print: string;
  done: Promise<void>;
  settled: boolean;
  claimed: boolean;
  /** Its record exists: from then on the pool's registry counts it. */
  recorded: boolean;
}

/** What speculation needs of the pool: its marks, and its boot of one warm sheep. */
export interface AheadPool extends PoolMarks {
  boot(config: WarmConfig, definition: AgentDefinition, print: string, onRecorded: (agentId: string) => void): Promise<void>;
}

export class Speculations {
  private readonly boots = new Set<Boot>();
  /** One call's boots judged after the last's: each counts the room the one before took. */
  private chain: Promise<void> = Promise.resolve();
  /** Boots whose record (and so whose memory in `poolMb`) does not exist yet. */
  private unrecorded = 0;

  constructor(
    private readonly herd: Herd,
    private readonly pool: AheadPool,
  ) {}

  /**
   * Boots, with no task, the sheep a call the model is still writing will start: never more than
   * it names (MAX_SPECULATIVE_PER_NAME at most), counting the ready and booting ones of the same
   * definition that would serve it, and only while the pool stays within `memoryMb`. Definitions
   * are the pool's (user and bundled): a repository's never boot before the call's own trust check.
   * Each sheep is kept by the pool's rules for sheep beyond its sizes (`returned`).
   */
  speculate(wants: readonly SpeculativeWant[]): Promise<void> {
    this.chain = this.chain.then(() => actingFrom("shepherd", () => this.bootAhead(wants))).catch(() => undefined);
    return this.chain;
  }

  private async bootAhead(wants: readonly SpeculativeWant[]): Promise<void> {
    const config = this.pool.config();
    if (!config || this.herd.disposed || wants.length === 0) return;
    const defs = await config.definitions();
    let room = Math.floor(((config.memoryMb ?? 0) - (await poolMb(this.herd))) / WARM_SHEEP_MB) - this.unrecorded;
    for (const want of wants) {
      const definition = defs.find((d) => d.name === want.name);
      if (!definition) continue;
      const print = fingerprint(definition, want.model ?? definition.model);
      let have = this.booting(print);
      for (const rec of this.herd.registry.warm.values()) {
        if (rec.host === undefined && this.pool.prints.get(rec.agentId) === print && (rec.state === "idle" || rec.state === "starting")) have++;
      }
      for (let n = have; n < Math.min(want.count, MAX_SPECULATIVE_PER_NAME) && room > 0; n++, room--) this.bootOne(config, definition, print);
    }
  }

  private bootOne(config: WarmConfig, definition: AgentDefinition, print: string): void {
    this.unrecorded++;
    let recorded = false;
    let entry: Boot | undefined;
    const boot = this.pool
      .boot(config, definition, print, (agentId) => {
        recorded = true;
        if (entry) entry.recorded = true;
        this.unrecorded--;
        this.pool.returned.add(agentId);
      })
      .finally(() => {
        if (!recorded) this.unrecorded--;
      });
    entry = this.add(print, boot);
    entry.recorded = recorded;
  }

  /**
   * Boots under way for a call, of this fingerprint, that have no record yet: they count as sheep the
   * call will find (a recorded one is in the pool's registry, which counts it).
   */
  booting(print: string): number {
    let n = 0;
    for (const b of this.boots) if (b.print === print && !b.settled && !b.recorded) n++;
    return n;
  }

  /** Keeps the boot known until it settles, so a start can wait for it. */
  private add(print: string, boot: Promise<void>): Boot {
    const b: Boot = { print, done: boot, settled: false, claimed: false, recorded: false };
    this.boots.add(b);
    const settle = () => {
      b.settled = true;
      this.boots.delete(b);
    };
    boot.then(settle, settle);
    return b;
  }

  /**
   * A start that found no ready sheep claims one boot of its fingerprint still under way and gets
   * the promise to wait on; each boot serves one start, so a parallel delegation's starts wait for
   * as many boots as there are, and the rest boot their own.
   */
  claim(print: string, req: StartRequest): Promise<void> | undefined {
    // Booted on this machine in the pool's cwd: it serves a start of this machine only.
    if (req.host !== undefined) return undefined;
    for (const b of this.boots) {
      if (b.print !== print || b.settled || b.claimed) continue;
      b.claimed = true;
      return b.done.catch(() => undefined);
    }
    return undefined;
  }
}

/** Settles (never rejects) when the signal aborts: a wait that ends with its caller. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
