/**
 * The warm pool: ready, idle sheep booted ahead of need, so that a start which matches one takes
 * it in the time of a rename and a write instead of a pi boot. A warm sheep has never had a
 * prompt, or came back from a delegated task in a fresh conversation of its pi, and is in no view
 * of the herd; one that died, whose definition changed, or that the pool no longer wants is
 * closed, never handed out.
 */
import { actingFrom } from "../herd/edge.ts";
import { errorText } from "../../domain/errors.ts";
import type { Herd, WarmSource } from "../herd/herd.ts";
import { howEnded } from "../herd/liveness.ts";
import { launchWarm } from "./launch.ts";
import { waitingPlace } from "./start.ts";
import type { AgentDefinition, AgentRecord, StartRequest } from "../../ports/types.ts";
import { closeWarmSheep, keepToClose } from "./warm-close.ts";
import { fingerprint, fits, sameHost, type WarmConfig, warmLabel } from "./warm-fit.ts";
import { poolMb } from "./warm-memory.ts";
import { Renewals } from "./warm-renewal.ts";
import { type SpeculativeWant, Speculations, untilAborted } from "./warm-speculation.ts";

export interface WarmCount {
  ready: number;
  starting: number;
}

/** Ready and booting warm sheep per definition name, and why a name is not warm. */
export type WarmState = { counts: Record<string, WarmCount>; problems: Record<string, string> };

/** How long a start waits for a matching sheep's renewal before it boots its own (a renewal takes tens of ms). */
const RENEW_WAIT_MS = 2000;
/** After a failed boot, a name waits this long before the pool tries it again. */
const RETRY_AFTER_MS = 30_000;
/** A refill after a take waits while sheep work, at most this long: pi boots take the cores the work runs on. */
const QUIET_WAIT_MS = 10_000;
const QUIET_LOOK_MS = 250;

export class WarmPool implements WarmSource {
  private config: WarmConfig | undefined;
  /** agentId -> the fingerprint of the definition the warm sheep was booted with. */
  private readonly prints = new Map<string, string>();
  private filling: Promise<void> = Promise.resolve();
  private again = false;
  private running = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private quietWait: ReturnType<typeof setInterval> | undefined;
  private readonly failedAt = new Map<string, number>();
  /**
   * Warm sheep kept beyond the sizes, within `memoryMb`: ones that came back from a delegation, and
   * ones booted for a call the model was still writing.
   */
  private readonly returned = new Set<string>();
  private readonly renewals: Renewals;
  private readonly ahead: Speculations;
  /** Why a name is not warm (no such definition, a boot that failed), for the doctor and the herd. */
  readonly problems = new Map<string, string>();

  constructor(private readonly herd: Herd) {
    const marks = { config: () => this.config, prints: this.prints, returned: this.returned };
    this.renewals = new Renewals(herd, marks);
    this.ahead = new Speculations(herd, { ...marks, boot: (config, definition, print, onRecorded) => this.boot(config, definition, print, onRecorded) });
  }

  /** Starts (or resizes) the pool; sizes of {} close every warm sheep. */
  configure(config: WarmConfig): void {
    this.config = config;
    this.herd.warm = this;
    clearInterval(this.timer);
    this.timer = undefined;
    if (Object.values(config.sizes).some((n) => n > 0)) {
      // Death is found by the liveness calls the herd makes anyway; this only makes sure one is made.
      // It waits for a quiet herd like any replacement: a pi booting beside the work slows the work.
      this.timer = setInterval(() => this.refillWhenQuiet(), config.checkEveryMs ?? 5000);
      this.timer.unref?.();
    }
    this.refill();
  }

  /** Ready and booting warm sheep per definition name. */
  counts(): Record<string, WarmCount> {
    const out: Record<string, WarmCount> = {};
    for (const name of Object.keys(this.config?.sizes ?? {})) out[name] = { ready: 0, starting: 0 };
    for (const rec of this.herd.registry.warm.values()) {
      out[rec.agent] ??= { ready: 0, starting: 0 };
      const c = out[rec.agent]!;
      if (rec.state === "idle") c.ready++;
      else if (rec.state === "starting") c.starting++;
    }
    return out;
  }

  async take(req: StartRequest, signal?: AbortSignal, again = false): Promise<AgentRecord | undefined> {
    const config = this.config;
    if (!config || signal?.aborted || !fits(config, req)) return undefined;
    const model = req.model ?? req.definition.model;
    const print = fingerprint(req.definition, model);
    let taken: AgentRecord | undefined;
    for (const rec of [...this.herd.registry.warm.values()]) {
      if (rec.state !== "idle" || this.prints.get(rec.agentId) !== print || !sameHost(rec, req)) continue;
      // A start that asks for a sandbox takes only a sheep that runs in one (the user's "on" makes the pool's so).
      if (req.sandbox && !rec.sandboxed) continue;
      // Out of the pool before the first await: two starts never take the same sheep.
      this.herd.registry.warm.delete(rec.agentId);
      this.prints.delete(rec.agentId);
      this.returned.delete(rec.agentId);
      // Asked now, not from a cached answer; takes made together share one multiplexer call.
      if (await this.stillReady(rec, 0)) {
        taken = rec;
        break;
      }
      await this.discard(rec);
    }
    // A sheep booted for this very call while the model wrote it: waiting for it is never slower
    // than a boot of our own, which would start later.
    const booting = taken ? undefined : this.ahead.claim(print, req);
    if (booting) {
      await (signal ? Promise.race([booting, untilAborted(signal)]) : booting);
      if (!signal?.aborted) return this.take(req, signal, again);
      return undefined;
    }
    // A matching sheep that is renewing is ready in tens of milliseconds, a boot takes hundreds:
    // the start waits for it (a chain's next step, a delegation right after the one before).
    const renewing = this.renewals.serving(print, req);
    if (!taken && !again && renewing.length > 0) {
      const stop = new AbortController();
      const until = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
      await Promise.race([...renewing, this.herd.clock.sleep(RENEW_WAIT_MS, until).catch(() => undefined)]);
      stop.abort();
      if (!signal?.aborted) return this.take(req, signal, true);
    }
    if (taken) this.refillWhenQuiet();
    else this.refill();
    return taken;
  }

  /**
   * The replacement of a sheep just taken boots once no sheep of the herd is starting or working
   * (the one taken is usually given its task at once), or after QUIET_WAIT_MS: a pi booting
   * beside the work would slow the very call the pool was there to speed up.
   */
  private refillWhenQuiet(): void {
    if (this.quietWait) return;
    const since = Date.now();
    this.quietWait = setInterval(() => {
      const busy = [...this.herd.registry.agents.values()].some((a) => a.state === "starting" || a.state === "working");
      if (busy && Date.now() - since < QUIET_WAIT_MS) return;
      clearInterval(this.quietWait);
      this.quietWait = undefined;
      this.refill();
    }, QUIET_LOOK_MS);
    this.quietWait.unref?.();
  }

  /**
   * A delegated sheep whose task is done comes back into the pool instead of closing, in a fresh
   * conversation of the same pi (its own new-session path), when it was started as the pool
   * starts its sheep (the same definition as now, cwd, model, tools, placement, this machine)
   * and the pool has room. False: close it as before. Runs off the delegation's path.
   */
  giveBack(rec: AgentRecord, req: StartRequest): Promise<boolean> {
    const config = this.config;
    if (!config || this.herd.disposed || !fits(config, req) || req.model !== undefined) return Promise.resolve(false);
    return this.renewals.giveBack(rec, req, config);
  }

  /** Boots the sheep a call the model is still writing will start (see Speculations.speculate). */
  speculate(wants: readonly SpeculativeWant[]): Promise<void> {
    return this.ahead.speculate(wants);
  }

  /** Closes every warm sheep; the pool keeps none until configured again. */
  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    clearInterval(this.quietWait);
    this.quietWait = undefined;
    this.config = undefined;
    await this.filling.catch(() => undefined);
    await Promise.all([...this.herd.registry.warm.values()].map((rec) => this.discard(rec)));
  }

  /** Brings the pool to its sizes in the background; calls made while it runs fold into one more pass. */
  refill(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    // The pool's own work, whichever call made room: its audit events say the shepherd did it.
    this.filling = actingFrom("shepherd", async () => {
      try {
        do {
          this.again = false;
          await this.fill().catch(() => undefined);
        } while (this.again && !this.herd.disposed);
      } finally {
        this.running = false;
      }
    });
  }

  private async fill(): Promise<void> {
    const config = this.config;
    if (!config || this.herd.disposed) return;
    const defs = new Map<string, AgentDefinition>();
    for (const d of await config.definitions()) defs.set(d.name, d);
    const prints = new Map([...defs].map(([name, d]) => [name, fingerprint(d, d.model)]));
    // What the pool no longer wants: a changed definition, a smaller size, a sheep that died.
    const kept = new Map<string, AgentRecord[]>();
    let over: boolean | undefined;
    const overBudget = async () => (over ??= (await poolMb(this.herd)) > (config.memoryMb ?? 0));
    for (const rec of [...this.herd.registry.warm.values()]) {
      const wanted = config.sizes[rec.agent] ?? 0;
      const list = kept.get(rec.agent) ?? [];
      kept.set(rec.agent, list);
      if (rec.state === "exited") {
        // One whose close failed before: tried again, and no longer counted.
        this.herd.registry.warm.delete(rec.agentId);
        await this.discard(rec);
        continue;
      }
      // A booting sheep is judged once it is ready: closing it now would only fail its start.
      if (rec.state !== "idle") {
        list.push(rec);
        continue;
      }
      // One that came back is kept beyond the sizes while the pool holds no more than `memoryMb`.
      const beyond = list.length >= wanted && !(this.returned.has(rec.agentId) && !(await overBudget()));
      const stale = this.prints.get(rec.agentId) !== prints.get(rec.agent) || beyond;
      const ready = !stale && (await this.stillReady(rec, this.herd.liveness.intervalMs));
      if (!this.herd.registry.warm.has(rec.agentId)) continue; // a start took it meanwhile
      if (!ready) {
        this.herd.registry.warm.delete(rec.agentId);
        await this.discard(rec);
        continue;
      }
      list.push(rec);
    }
    const boots: Promise<void>[] = [];
    for (const [name, size] of Object.entries(config.sizes)) {
      const def = defs.get(name);
      if (!def) {
        this.problems.set(name, `no agent definition named "${name}" among the user's and the bundled ones (project agents are never warmed)`);
        continue;
      }
      const failed = this.failedAt.get(name);
      if (failed !== undefined && this.herd.clock.now() - failed < RETRY_AFTER_MS) continue;
      if (failed === undefined) this.problems.delete(name);
      for (let n = kept.get(name)?.length ?? 0; n < size; n++) boots.push(this.boot(config, def, prints.get(name)!));
    }
    await Promise.all(boots);
  }

  private async boot(config: WarmConfig, definition: AgentDefinition, print: string, onRecorded?: (agentId: string) => void): Promise<void> {
    let recorded: string | undefined;
    const req: StartRequest = {
      definition,
      cwd: config.cwd,
      // Never a split of the shepherd's window while it waits: a window of its own, moved into the
      // split when a start takes it (see handOver).
      placement: waitingPlace(config.placement),
      direction: config.direction,
      // Known from the moment the record exists, so no pass takes a booting sheep for a stale one.
      onRecorded: (agentId) => {
        recorded = agentId;
        this.prints.set(agentId, print);
        onRecorded?.(agentId);
      },
    };
    try {
      await launchWarm(this.herd, req, warmLabel(definition.name), this.herd.lifetime.signal);
      // Configured away (or smaller) while it booted: the next pass closes it.
      if (this.config !== config) this.again = true;
      this.failedAt.delete(definition.name);
    } catch (e) {
      // A failed start whose pane stayed is still recorded: the next pass closes it.
      const stuck = recorded === undefined ? undefined : this.herd.registry.warm.get(recorded);
      if (stuck) keepToClose(this.herd, stuck);
      this.failedAt.set(definition.name, this.herd.clock.now());
      this.problems.set(definition.name, `a warm sheep of "${definition.name}" did not start: ${errorText(e)}`);
    }
  }

  /** A warm sheep may be handed out only while its pane runs pi and pi has said it is ready. */
  private async stillReady(rec: AgentRecord, maxAgeMs: number): Promise<boolean> {
    const live = await this.herd.liveness.get(rec, maxAgeMs);
    if (live?.state !== "alive") return false;
    const snap = await this.herd.opts.files.snapshot(rec.agentId);
    return Boolean(snap.ready) && !howEnded(snap, live) && !snap.piGone;
  }

  private async discard(rec: AgentRecord): Promise<void> {
    this.prints.delete(rec.agentId);
    this.returned.delete(rec.agentId);
    if (await closeWarmSheep(this.herd, rec)) {
      this.herd.forget(rec);
      this.herd.audit({ event: "close", agentId: rec.agentId, label: rec.label, warm: true });
    } else keepToClose(this.herd, rec);
    await this.herd.persist();
  }
}
