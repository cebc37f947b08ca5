/**
 * The warm pool: ready, idle sheep booted ahead of need, so that a start which matches one takes
 * it in the time of a rename and a write instead of a pi boot. A warm sheep has never had a
 * prompt, or came back from a delegated task in a fresh conversation of its pi, and is in no view
 * of the herd; one that died, whose definition changed, or that the pool no longer wants is
 * closed, never handed out.
 */
import { actingFrom } from "../herd/edge.ts";
import { resolve } from "node:path";
import type { Direction, Placement } from "../../ports/runtime.ts";
import { closeAndConfirm } from "./close.ts";
import { errorText } from "../../domain/errors.ts";
import type { Herd, WarmSource } from "../herd/herd.ts";
import { howEnded } from "../herd/liveness.ts";
import { launchWarm, waitingPlace } from "./start.ts";
import { WARM_SHEEP_MB } from "../../domain/bounds.ts";
import { newId } from "../../domain/ids.ts";
import { pendingPrompts } from "../prompts/ledger.ts";
import type { AgentDefinition, AgentRecord, StartRequest } from "../../ports/types.ts";

export interface WarmConfig {
  /** Agent definition name -> how many ready sheep to keep. */
  sizes: Readonly<Record<string, number>>;
  /** The directory the pool's sheep run in (the shepherd's). */
  cwd: string;
  placement: Placement;
  direction: Direction;
  /** The definitions a start would find now, read fresh each time; names not found are not warmed. */
  definitions(): Promise<AgentDefinition[]>;
  /** How often the pool looks for sheep that died (ms). */
  checkEveryMs?: number;
  /**
   * The memory (MB) the pool's sheep may hold, of every definition, booting ones too, for a
   * delegated sheep to come back into instead of closing: each counted at its pi's resident memory
   * where the host can read it, else at WARM_SHEEP_MB. 0 or absent: none come back.
   */
  memoryMb?: number;
}

export interface WarmCount {
  ready: number;
  starting: number;
}

/** How long a start waits for a matching sheep's renewal before it boots its own (a renewal takes tens of ms). */
const RENEW_WAIT_MS = 2000;
/** After a failed boot, a name waits this long before the pool tries it again. */
const RETRY_AFTER_MS = 30_000;
/** A refill after a take waits while sheep work, at most this long: pi boots take the cores the work runs on. */
const QUIET_WAIT_MS = 10_000;
const QUIET_LOOK_MS = 250;

/** Two definitions are the same sheep when every field a sheep runs with is the same. */
function fingerprint(d: AgentDefinition, model: string | undefined): string {
  const sorted = Object.fromEntries(Object.entries({ ...d, model }).sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify(sorted);
}

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
  /** Warm sheep that came back from a delegation: kept beyond the sizes, within `memoryMb`. */
  private readonly returned = new Set<string>();
  /** Renewals in flight, by sheep: a matching start waits for one rather than boot. */
  private readonly renewing = new Map<string, { print: string; rec: AgentRecord; done: Promise<void> }>();
  /** The last sheep's move into the pool: the next one's room is judged after it. */
  private moving: Promise<void> = Promise.resolve();
  /** Why a name is not warm (no such definition, a boot that failed), for the doctor and the herd. */
  readonly problems = new Map<string, string>();

  constructor(private readonly herd: Herd) {}

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

  /**
   * Whether a start asks for what the pool keeps: its placement and a fresh conversation, and on this
   * machine its cwd. A start on another host fits too: only a sheep of that host in that cwd (one
   * that came back there) is taken for it (`sameHost`).
   */
  private fits(config: WarmConfig, req: StartRequest): boolean {
    if (req.isolate || req.resume) return false;
    if (req.host === undefined && resolve(req.cwd) !== resolve(config.cwd)) return false;
    if ((req.placement ?? "tab") !== config.placement) return false;
    return config.placement !== "pane" || (req.direction ?? "right") === config.direction;
  }

  async take(req: StartRequest, signal?: AbortSignal, again = false): Promise<AgentRecord | undefined> {
    const config = this.config;
    if (!config || signal?.aborted || !this.fits(config, req)) return undefined;
    const model = req.model ?? req.definition.model;
    const print = fingerprint(req.definition, model);
    let taken: AgentRecord | undefined;
    for (const rec of [...this.herd.registry.warm.values()]) {
      if (rec.state !== "idle" || this.prints.get(rec.agentId) !== print || !sameHost(rec, req)) continue;
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
    // A matching sheep that is renewing is ready in tens of milliseconds, a boot takes hundreds:
    // the start waits for it (a chain's next step, a delegation right after the one before).
    const renewing = [...this.renewing.values()].filter((r) => r.print === print && sameHost(r.rec, req)).map((r) => r.done);
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
    if (!config || this.herd.disposed || !this.fits(config, req) || req.model !== undefined) return Promise.resolve(false);
    // Known before the first await: a start right after (a chain's next step) waits for this sheep.
    let over!: () => void;
    this.renewing.set(rec.agentId, { print: fingerprint(req.definition, req.definition.model), rec, done: new Promise<void>((r) => (over = r)) });
    return this.comeBack(rec, req, config).finally(() => {
      this.renewing.delete(rec.agentId);
      over();
    });
  }

  private async comeBack(rec: AgentRecord, req: StartRequest, config: WarmConfig): Promise<boolean> {
    const room = async () => (await this.poolMb()) + (await this.residentMb(rec.agentId)) <= (config.memoryMb ?? 0);
    if (!(await room())) return false;
    const print = fingerprint(req.definition, req.definition.model);
    // The definition as a start would find it now: one that changed since is not what the pool keeps.
    const now = (await config.definitions().catch(() => [])).find((d) => d.name === req.definition.name);
    if (!now || fingerprint(now, now.model) !== print) return false;
    const renewId = newId("renew");
    const label = rec.label;
    // One at a time across sheep: two that came back together must not both fit the room left for one.
    const turn = this.moving;
    let done!: () => void;
    this.moving = new Promise<void>((r) => (done = r));
    await turn;
    const moved = await this.herd
      .exclusive(rec.agentId, async () => {
        if (this.config !== config || !(await room()) || this.herd.registry.agents.get(rec.agentId) !== rec) return false;
        if (rec.owner !== this.herd.opts.owner || rec.state !== "idle" || pendingPrompts(this.herd, rec).length > 0 || rec.worktree || rec.resumedFrom)
          return false;
        const prompts = [...this.herd.registry.prompts.values()].filter((p) => p.agentId === rec.agentId);
        // Only what the conversation already received: a result still owed keeps the sheep as it is.
        if (prompts.some((p) => !p.settled || !p.delivered || p.notify || p.delegationId)) return false;
        for (const p of prompts) this.herd.registry.prompts.delete(p.promptId);
        delete rec.activePromptId;
        delete rec.queue;
        this.herd.registry.agents.delete(rec.agentId);
        rec.warm = true;
        this.herd.setState(rec, "starting");
        rec.label = warmLabel(rec.agent);
        this.herd.registry.warm.set(rec.agentId, rec);
        this.prints.set(rec.agentId, print);
        await this.herd.opts.host.submit(rec.agentId, { kind: "renew", renewId });
        return true;
      })
      .catch(() => false)
      .finally(() => done());
    if (!moved) {
      if (this.herd.registry.warm.get(rec.agentId) === rec) await this.backToHerd(rec, label);
      return false;
    }
    // A split of the shepherd's window leaves it for a window of its own while it waits.
    const { runtime } = this.herd.opts;
    const out =
      config.placement === "pane" && runtime.place
        ? await runtime.place(rec, "tab", config.direction).then(
            () => true,
            () => false,
          )
        : false;
    void runtime.relabel?.(rec, rec.label, out ? "tab" : config.placement).catch(() => undefined);
    await this.herd.persist();
    const renewed = await this.renewed(rec, renewId);
    if (typeof renewed === "string") {
      this.herd.audit({ event: "failure", agentId: rec.agentId, label: rec.label, reason: "renew_failed", error: renewed });
      await this.backToHerd(rec, label);
      return false;
    }
    if (renewed.sessionPath)
      rec.sessionPath = (await this.herd.opts.host.renewed?.(rec.agentId, renewed.sessionPath).catch(() => undefined)) ?? rec.sessionPath;
    this.herd.setState(rec, "idle");
    rec.renewed = true;
    this.returned.add(rec.agentId);
    this.herd.unwatch(rec.agentId);
    await this.herd.persist();
    this.herd.audit({ event: "renew", agentId: rec.agentId, label: rec.label, agent: rec.agent });
    return true;
  }

  /** What the pool's sheep hold now, in MB: each pi's resident memory where the host reads it, else the estimate. */
  private async poolMb(): Promise<number> {
    const sizes = await Promise.all([...this.herd.registry.warm.keys()].map((id) => this.residentMb(id)));
    return sizes.reduce((a, b) => a + b, 0);
  }

  private async residentMb(agentId: string): Promise<number> {
    const kb = await this.herd.opts.host.residentKb?.(agentId).catch(() => undefined);
    return kb === undefined ? WARM_SHEEP_MB : kb / 1024;
  }

  /** The sheep's answer to its renewal: its new session, or why not (then it is closed as before). */
  private async renewed(rec: AgentRecord, renewId: string): Promise<{ sessionPath?: string } | string> {
    const { host } = this.herd.opts;
    const deadline = this.herd.clock.now() + this.herd.opts.startTimeoutMs;
    for (;;) {
      const r = await host.result(rec.agentId, renewId).catch(() => undefined);
      if (r?.status === "completed") return r.sessionPath ? { sessionPath: r.sessionPath } : {};
      if (r) return r.errorMessage ?? "the sheep could not start a new session";
      const live = await this.herd.liveness.get(rec);
      if (live?.state !== "alive") return "its pane or pi ended while it renewed";
      const left = deadline - this.herd.clock.now();
      if (left <= 0 || this.herd.disposed) return `no new session after ${this.herd.opts.startTimeoutMs / 1000} s`;
      await this.herd.bells
        .next([rec.agentId], Math.min(left, this.herd.opts.livenessIntervalMs), this.herd.clock, this.herd.lifetime.signal)
        .catch(() => undefined);
    }
  }

  /** A sheep that did not come back is the herd's again, to be closed there as any delegated sheep is. */
  private async backToHerd(rec: AgentRecord, label: string): Promise<void> {
    this.herd.registry.warm.delete(rec.agentId);
    this.prints.delete(rec.agentId);
    delete rec.warm;
    this.herd.setState(rec, "idle");
    rec.label = label;
    this.herd.registry.agents.set(rec.agentId, rec);
    await this.herd.persist();
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
    const overBudget = async () => (over ??= (await this.poolMb()) > (config.memoryMb ?? 0));
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

  private async boot(config: WarmConfig, definition: AgentDefinition, print: string): Promise<void> {
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
    const snap = await this.herd.opts.host.snapshot(rec.agentId);
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

/**
 * Closes a warm sheep's pane and removes its files: one that never had a prompt keeps nothing. Its record is the caller's to drop (this pool's, or a dead shepherd's found at attach),
 * but only when this says the pane is gone: a forgotten pane would run on with nobody to close it.
 */
export async function closeWarmSheep(herd: Herd, rec: AgentRecord): Promise<boolean> {
  // As any close: the files go once the pane and its pi are gone. A pane still there (the
  // multiplexer stopped answering) keeps them, and its record, for another try.
  if ((await closeAndConfirm(herd, rec)) !== undefined) return false;
  herd.unwatch(rec.agentId);
  // One that came back from a task keeps what its tasks left (their conversations, evidence), as a closed sheep does.
  if (rec.renewed) await herd.opts.host.cleanup(rec.agentId).catch(() => undefined);
  else await herd.opts.host.discard(rec.agentId).catch(() => undefined);
  return true;
}

/** A warm sheep whose pane could not be closed: never handed out, closed again by the pool's next pass or at quit. */
export function keepToClose(herd: Herd, rec: AgentRecord): void {
  herd.setState(rec, "exited");
  rec.owner = herd.opts.owner;
  herd.registry.warm.set(rec.agentId, rec);
}

/** A warm sheep's label until a start gives it one: seen only in the multiplexer's window list. */
function warmLabel(name: string): string {
  return `warm ${[...name].slice(0, 40).join("")}`;
}

/** A warm sheep serves a start on its own machine, and on another host only in the cwd it ran in there. */
function sameHost(rec: AgentRecord, req: StartRequest): boolean {
  return rec.host === req.host && (req.host === undefined || rec.cwd === req.cwd);
}
