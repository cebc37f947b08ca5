/**
 * A delegated sheep whose task is done comes back into the warm pool in a fresh conversation of
 * the same pi (its own new-session path) instead of closing; a start that matches it meanwhile
 * waits for it rather than boot.
 */
import type { Herd } from "../herd/herd.ts";
import { newId } from "../../domain/ids.ts";
import { pendingPrompts } from "../prompts/ledger.ts";
import type { AgentRecord, StartRequest } from "../../ports/types.ts";
import { fingerprint, sameHost, type WarmConfig, warmLabel } from "./warm-fit.ts";
import { poolMb, residentMb } from "./warm-memory.ts";

/** What the pool shares with its renewals: its config now, and its marks of each warm sheep. */
export interface PoolMarks {
  config(): WarmConfig | undefined;
  /** agentId -> the fingerprint of the definition the warm sheep was booted with. */
  readonly prints: Map<string, string>;
  /** Warm sheep that came back from a delegation: kept beyond the sizes, within `memoryMb`. */
  readonly returned: Set<string>;
}

export class Renewals {
  /** Renewals in flight, by sheep: a matching start waits for one rather than boot. */
  private readonly inFlight = new Map<string, { print: string; rec: AgentRecord; done: Promise<void> }>();
  /** The last sheep's move into the pool: the next one's room is judged after it. */
  private moving: Promise<void> = Promise.resolve();

  constructor(
    private readonly herd: Herd,
    private readonly pool: PoolMarks,
  ) {}

  /** The renewals under way of sheep that would serve this start. */
  serving(print: string, req: StartRequest): Promise<void>[] {
    return [...this.inFlight.values()].filter((r) => r.print === print && sameHost(r.rec, req)).map((r) => r.done);
  }

  /** Brings the sheep back into the pool; false: it is the herd's again, to be closed as before. */
  giveBack(rec: AgentRecord, req: StartRequest, config: WarmConfig): Promise<boolean> {
    // Known before the first await: a start right after (a chain's next step) waits for this sheep.
    let over!: () => void;
    this.inFlight.set(rec.agentId, { print: fingerprint(req.definition, req.definition.model), rec, done: new Promise<void>((r) => (over = r)) });
    return this.comeBack(rec, req, config).finally(() => {
      this.inFlight.delete(rec.agentId);
      over();
    });
  }

  private async comeBack(rec: AgentRecord, req: StartRequest, config: WarmConfig): Promise<boolean> {
    const { herd, pool } = this;
    const room = async () => (await poolMb(herd)) + (await residentMb(herd, rec.agentId)) <= (config.memoryMb ?? 0);
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
    const moved = await herd
      .exclusive(rec.agentId, async () => {
        if (pool.config() !== config || !(await room()) || herd.registry.agents.get(rec.agentId) !== rec) return false;
        if (rec.owner !== herd.opts.owner || rec.state !== "idle" || pendingPrompts(herd, rec).length > 0 || rec.worktree || rec.resumedFrom) return false;
        const prompts = [...herd.registry.prompts.values()].filter((p) => p.agentId === rec.agentId);
        // Only what the conversation already received: a result still owed keeps the sheep as it is.
        if (prompts.some((p) => !p.settled || !p.delivered || p.notify || p.delegationId)) return false;
        for (const p of prompts) herd.registry.prompts.delete(p.promptId);
        delete rec.activePromptId;
        delete rec.queue;
        herd.registry.agents.delete(rec.agentId);
        // Its task is over: its spend stays counted in the day, and the fresh conversation spends from zero (the sheep resets too).
        herd.spend.closed(rec);
        for (const k of ["budget", "spent", "ledgerKey", "ledgerDay", "ledgerBase", "budgetWarned"] as const) delete rec[k];
        rec.warm = true;
        herd.setState(rec, "starting");
        rec.label = warmLabel(rec.agent);
        herd.registry.warm.set(rec.agentId, rec);
        pool.prints.set(rec.agentId, print);
        await herd.opts.files.submit(rec.agentId, { kind: "renew", renewId });
        return true;
      })
      .catch(() => false)
      .finally(() => done());
    if (!moved) {
      if (herd.registry.warm.get(rec.agentId) === rec) await this.backToHerd(rec, label);
      return false;
    }
    // A split of the shepherd's window leaves it for a window of its own while it waits.
    const { runtime } = herd.opts;
    const out =
      config.placement === "pane" && runtime.place
        ? await runtime.place(rec, "tab", config.direction).then(
            () => true,
            () => false,
          )
        : false;
    void runtime.relabel?.(rec, rec.label, out ? "tab" : config.placement).catch(() => undefined);
    await herd.persist();
    const renewed = await this.renewed(rec, renewId);
    if (typeof renewed === "string") {
      herd.audit({ event: "failure", agentId: rec.agentId, label: rec.label, reason: "renew_failed", error: renewed });
      await this.backToHerd(rec, label);
      return false;
    }
    if (renewed.sessionPath) rec.sessionPath = (await herd.opts.files.renewed?.(rec.agentId, renewed.sessionPath).catch(() => undefined)) ?? rec.sessionPath;
    herd.setState(rec, "idle");
    rec.renewed = true;
    pool.returned.add(rec.agentId);
    herd.unwatch(rec.agentId);
    await herd.persist();
    herd.audit({ event: "renew", agentId: rec.agentId, label: rec.label, agent: rec.agent });
    return true;
  }

  /** The sheep's answer to its renewal: its new session, or why not (then it is closed as before). */
  private async renewed(rec: AgentRecord, renewId: string): Promise<{ sessionPath?: string } | string> {
    const { herd } = this;
    const { files: host } = herd.opts;
    const deadline = herd.clock.now() + herd.opts.startTimeoutMs;
    for (;;) {
      const r = await host.result(rec.agentId, renewId).catch(() => undefined);
      if (r?.status === "completed") return r.sessionPath ? { sessionPath: r.sessionPath } : {};
      if (r) return r.errorMessage ?? "the sheep could not start a new session";
      const live = await herd.liveness.get(rec);
      if (live?.state !== "alive") return "its pane or pi ended while it renewed";
      const left = deadline - herd.clock.now();
      if (left <= 0 || herd.disposed) return `no new session after ${herd.opts.startTimeoutMs / 1000} s`;
      await herd.bells.next([rec.agentId], Math.min(left, herd.opts.livenessIntervalMs), herd.clock, herd.lifetime.signal).catch(() => undefined);
    }
  }

  /** A sheep that did not come back is the herd's again, to be closed there as any delegated sheep is. */
  private async backToHerd(rec: AgentRecord, label: string): Promise<void> {
    const { herd } = this;
    herd.registry.warm.delete(rec.agentId);
    this.pool.prints.delete(rec.agentId);
    delete rec.warm;
    herd.setState(rec, "idle");
    rec.label = label;
    herd.registry.agents.set(rec.agentId, rec);
    await herd.persist();
  }
}
