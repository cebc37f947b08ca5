import type { Runtime } from "../ports/runtime.js";
import type { SheepHost, SheepResult, SheepSnapshot } from "../ports/sheep-host.js";
import type { StateStore } from "../ports/store.js";
import { systemClock, type Clock } from "./clock.js";
import { errorText, ShepherdError } from "./errors.js";
import { newId } from "./ids.js";
import { labelProblem } from "./labels.js";
import { LivenessMonitor } from "./liveness.js";
import { Registry } from "./registry.js";
import { Bells, every } from "./signals.js";
import type {
  AgentRecord,
  AgentStatus,
  CloseOutcome,
  PromptRecord,
  StartedAgent,
  StartRequest,
  SubmittedPrompt,
  WaitItem,
} from "./types.js";

export interface ShepherdOptions {
  runtime: Runtime;
  host: SheepHost;
  /** Identifies this shepherd as the owner of the panes it creates. */
  owner: string;
  clock?: Clock;
  /** How often waiters ask the multiplexer whether panes still live. */
  livenessIntervalMs?: number;
  startTimeoutMs?: number;
  defaultWaitTimeoutSec?: number;
  maxPromptBytes?: number;
  /** Where records are written through, so a reloaded or restarted shepherd can re-attach. */
  store?: StateStore;
  /** Whether the shepherd named by an owner string still runs; its sheep are not ours to take. */
  ownerAlive?: (owner: string) => boolean;
}

export interface AttachReport {
  /** Sheep of an earlier shepherd (or of this one before a reload) that are ours again. */
  adopted: string[];
  /** Adopted records whose panes were gone: marked and dropped. */
  pruned: string[];
  warnings: string[];
}

export interface WaitProgress {
  done: number;
  total: number;
  items: { promptId: string; agentId?: string; label?: string; state: string; elapsedMs: number }[];
}

/** Closed sheep whose records are kept, and settled prompts kept per sheep; see bound(). */
export const MAX_CLOSED_KEPT = 64;
export const MAX_SETTLED_KEPT = 32;

const DEFAULTS = {
  livenessIntervalMs: 1000,
  startTimeoutMs: 60_000,
  defaultWaitTimeoutSec: 1200,
  maxPromptBytes: 4 * 1024 * 1024,
};

/** The five primitives over a runtime and a sheep host; knows nothing of pi, herdr or tmux. */
export class Shepherd {
  readonly registry = new Registry();
  private readonly bells = new Bells();
  private readonly clock: Clock;
  private readonly liveness: LivenessMonitor;
  private readonly unsubscribe = new Map<string, () => void>();
  /** Records dropped from the registry: the store must drop them too, even under an old owner. */
  private readonly forgotten = new Set<string>();
  private readonly opts: typeof DEFAULTS & ShepherdOptions;

  constructor(options: ShepherdOptions) {
    this.opts = { ...DEFAULTS, ...stripUndefined(options) } as typeof DEFAULTS & ShepherdOptions;
    this.clock = options.clock ?? systemClock;
    this.liveness = new LivenessMonitor(options.runtime, this.clock, this.opts.livenessIntervalMs);
  }

  get runtimeName() {
    return this.opts.runtime.name;
  }

  get owner() {
    return this.opts.owner;
  }

  /**
   * Takes back the records this shepherd may own: its own from before a reload, and those of a
   * shepherd that no longer runs. Results are files, so a prompt sent before can still be waited for.
   */
  async attach(): Promise<AttachReport> {
    const report: AttachReport = { adopted: [], pruned: [], warnings: [] };
    const store = this.opts.store;
    if (!store) return report;
    const { state, warnings } = await store.load();
    report.warnings.push(...warnings);
    const alive = this.opts.ownerAlive ?? (() => true);
    const ours = state.agents.filter((a) => a.owner === this.opts.owner || !alive(a.owner));
    for (const rec of ours) {
      if (this.registry.agents.has(rec.agentId)) continue;
      if (rec.state === "closed" && rec.owner !== this.opts.owner) {
        // A dead shepherd's closed sheep: nothing left to use, so the file lets go of it
        // instead of handing it from owner to owner forever.
        this.forgotten.add(rec.agentId);
        continue;
      }
      rec.owner = this.opts.owner;
      this.registry.agents.set(rec.agentId, rec);
      if (rec.state !== "closed") this.unsubscribe.set(rec.agentId, this.opts.host.subscribe(rec.agentId, () => this.bells.ring(rec.agentId)));
      report.adopted.push(rec.agentId);
    }
    const adopted = new Set(report.adopted);
    for (const p of state.prompts) if (adopted.has(p.agentId) && !this.registry.prompts.has(p.promptId)) this.registry.prompts.set(p.promptId, p);
    for (const id of report.adopted) {
      const rec = this.registry.agents.get(id)!;
      if (rec.state === "closed" || rec.state === "starting") continue;
      if ((await this.liveness.get(rec, 0)) === "gone") {
        // Gone while nobody watched: settle what it owed from its files, then drop it.
        report.pruned.push(...(await this.dropGone(rec)));
      } else if (rec.activePromptId) {
        const p = this.registry.prompts.get(rec.activePromptId);
        if (p && !p.settled) await this.settleFromDisk(rec, p);
      }
    }
    // A record caught half-way through start: a sheep that did become ready is kept; any other
    // belonged to a start that can no longer finish.
    for (const id of report.adopted) {
      const rec = this.registry.agents.get(id);
      if (rec?.state !== "starting") continue;
      const snap = await this.opts.host.snapshot(rec.agentId);
      if (snap.ready && !snap.exited && (await this.liveness.get(rec, 0)) === "alive") {
        rec.state = "idle";
        continue;
      }
      await this.opts.runtime.close(rec.paneId, rec.agentId).catch(() => undefined);
      report.pruned.push(...(await this.dropGone(rec)));
    }
    await this.changed();
    return report;
  }

  /** Our record of a sheep; a sheep of another live shepherd is named as such, not as unknown. */
  private async find(agentId: unknown): Promise<AgentRecord> {
    try {
      return this.registry.agent(agentId);
    } catch (e) {
      if (!this.opts.store || typeof agentId !== "string") throw e;
      const { state } = await this.opts.store.load().catch(() => ({ state: { agents: [] as AgentRecord[] } }));
      const foreign = state.agents.find((a) => a.agentId === agentId && a.owner !== this.opts.owner);
      if (foreign) {
        throw new ShepherdError("not_owned", `sheep ${agentId} (${foreign.label}) belongs to another running shepherd; only it may use or close it.`);
      }
      throw e;
    }
  }

  /** Stops watching the sheep's files; the sheep themselves keep running. */
  dispose(): void {
    for (const off of this.unsubscribe.values()) off();
    this.unsubscribe.clear();
  }

  /** Writes the records through; a burst of changes becomes one write. */
  private changed(): Promise<void> {
    this.bound();
    const store = this.opts.store;
    if (!store) return Promise.resolve();
    const agents = [...this.registry.agents.values()];
    const ids = new Set(agents.map((a) => a.agentId));
    const prompts = [...this.registry.prompts.values()].filter((p) => ids.has(p.agentId));
    // A failed write must not fail the call that changed the records; the next change retries.
    const forgotten = [...this.forgotten].filter((id) => !ids.has(id));
    return store
      .save(this.opts.owner, { agents: agents.map((a) => ({ ...a })), prompts: prompts.map((p) => ({ ...p })), forgotten })
      .catch(() => undefined);
  }

  async start(req: StartRequest, signal?: AbortSignal): Promise<StartedAgent> {
    const label = this.pickLabel(req.label, req.definition.name);
    const release = this.registry.reserveLabel(label);
    try {
      return await this.launch(req, label, signal);
    } finally {
      // by now the record holds the label, or the start failed and it is free again
      release();
    }
  }

  private async launch(req: StartRequest, label: string, signal?: AbortSignal): Promise<StartedAgent> {
    const { runtime, host } = this.opts;
    const agentId = newId("agent");
    const prepared = await host.prepare({
      agentId,
      definition: req.definition,
      cwd: req.cwd,
      ...(req.model !== undefined ? { model: req.model } : {}),
    });
    const pane = await runtime.createPane({
      agentId,
      placement: req.placement ?? "tab",
      direction: req.direction ?? "right",
      cwd: req.cwd,
      label,
    }).catch(async (e: unknown) => {
      await host.cleanup(agentId).catch(() => undefined); // no pane: nothing else will remove the files prepare wrote
      throw e;
    });
    const model = req.model ?? req.definition.model;
    const rec: AgentRecord = {
      agentId,
      agent: req.definition.name,
      label,
      runtime: runtime.name,
      paneId: pane.paneId,
      cwd: req.cwd,
      ...(model !== undefined ? { model } : {}),
      sessionPath: prepared.sessionPath,
      createdAt: new Date(this.clock.now()).toISOString(),
      owner: this.opts.owner,
      state: "starting",
      ...(pane.attachHint !== undefined ? { attachHint: pane.attachHint } : {}),
    };
    // Recorded before the launch line is typed: whatever happens next, we know the pane is ours.
    this.registry.agents.set(agentId, rec);
    await this.changed();
    this.unsubscribe.set(agentId, host.subscribe(agentId, () => this.bells.ring(agentId)));
    try {
      await runtime.runLauncher(pane.paneId, prepared.launcherArgv);
      await this.untilReady(rec, signal);
    } catch (e) {
      await this.abandon(rec, e);
    }
    rec.state = "idle";
    await this.changed();
    return {
      agentId,
      agent: rec.agent,
      label,
      runtime: rec.runtime,
      paneId: rec.paneId,
      cwd: rec.cwd,
      ...(rec.model !== undefined ? { model: rec.model } : {}),
      sessionPath: rec.sessionPath,
      createdAt: rec.createdAt,
      ...(rec.attachHint !== undefined ? { attachHint: rec.attachHint } : {}),
    };
  }

  async prompt(agentId: unknown, message: unknown): Promise<SubmittedPrompt> {
    const rec = await this.find(agentId);
    if (typeof message !== "string" || message.length === 0) {
      throw new ShepherdError("invalid_params", "message must be a non-empty string.");
    }
    const bytes = Buffer.byteLength(message, "utf8");
    if (bytes > this.opts.maxPromptBytes) {
      throw new ShepherdError(
        "invalid_params",
        `message is ${bytes} bytes; the limit is ${this.opts.maxPromptBytes}. Put the material in a file and name the file in the prompt.`,
      );
    }
    this.refuseIfGone(rec);
    const snap = await this.refresh(rec);
    const active = rec.activePromptId ? this.registry.prompts.get(rec.activePromptId) : undefined;
    if (active && !active.settled) {
      throw new ShepherdError(
        "prompt_pending",
        `sheep ${rec.agentId} (${rec.label}) is still working on ${active.promptId}; wait for it before prompting again.`,
      );
    }
    if (snap.exited) {
      rec.state = "exited";
      this.refuseIfGone(rec);
    }
    const promptId = newId("prompt");
    const submittedAt = new Date(this.clock.now()).toISOString();
    const prompt: PromptRecord = { promptId, agentId: rec.agentId, submittedAt };
    this.registry.prompts.set(promptId, prompt);
    rec.activePromptId = promptId;
    rec.state = "working";
    try {
      await this.opts.host.submit(rec.agentId, promptId, message);
    } catch (e) {
      this.registry.prompts.delete(promptId);
      delete rec.activePromptId;
      rec.state = "idle";
      throw new ShepherdError("runtime_error", `could not deliver the prompt to ${rec.agentId}: ${errorText(e)}`);
    }
    await this.changed();
    return { promptId, agentId: rec.agentId, submittedAt };
  }

  /** Waits for every id concurrently; results come back in the order asked. */
  async wait(
    promptIds: readonly string[],
    opts: { timeoutSec?: number; signal?: AbortSignal; onProgress?: (p: WaitProgress) => void } = {},
  ): Promise<WaitItem[]> {
    const timeoutSec = opts.timeoutSec ?? this.opts.defaultWaitTimeoutSec;
    const deadline = this.clock.now() + timeoutSec * 1000;
    const started = this.clock.now();
    const states = new Map<string, string>();
    const report = () => {
      if (!opts.onProgress) return;
      const items = promptIds.map((id) => {
        const p = this.registry.prompts.get(id);
        const a = p ? this.registry.agents.get(p.agentId) : undefined;
        return {
          promptId: id,
          ...(a ? { agentId: a.agentId, label: a.label } : {}),
          state: states.get(id) ?? "waiting",
          elapsedMs: this.clock.now() - started,
        };
      });
      opts.onProgress({ done: items.filter((i) => i.state !== "waiting").length, total: items.length, items });
    };
    report();
    // Elapsed time moves even when no state does: a person watching wants to see it tick.
    const stopTicking = opts.onProgress ? every(this.clock, 1000, report) : () => undefined;
    try {
      return await Promise.all(
        promptIds.map(async (id) => {
          const item = await this.waitOne(id, deadline, opts.signal);
          states.set(id, item.status);
          report();
          return item;
        }),
      );
    } finally {
      stopTicking();
    }
  }

  async status(agentId: unknown): Promise<AgentStatus> {
    const rec = await this.find(agentId);
    let paneAlive = false;
    let runtimeStatus: string | undefined;
    if (rec.state !== "closed") {
      paneAlive = (await this.liveness.fresh(rec)) !== "gone";
      const snap = await this.refresh(rec);
      this.deriveState(rec, snap, paneAlive);
      if (paneAlive && this.opts.runtime.agentStatus) {
        runtimeStatus = await this.opts.runtime.agentStatus(rec.paneId).catch(() => undefined);
      }
    }
    return this.describe(rec, paneAlive, runtimeStatus);
  }

  /** Every record that is not closed; reads state without touching any pane. */
  async herd(): Promise<AgentStatus[]> {
    const live = [...this.registry.agents.values()].filter((a) => a.state !== "closed");
    return Promise.all(live.map((a) => this.status(a.agentId)));
  }

  /** Sheep recorded by other shepherds on the same agent dir, as they recorded them; never touched. */
  async others(): Promise<AgentRecord[]> {
    if (!this.opts.store) return [];
    const { state } = await this.opts.store.load();
    return state.agents.filter((a) => a.owner !== this.opts.owner && a.state !== "closed" && !this.registry.agents.has(a.agentId));
  }

  async read(agentId: unknown, lines: number): Promise<string> {
    const rec = await this.find(agentId);
    if (rec.state === "closed") throw new ShepherdError("agent_closed", `sheep ${rec.agentId} is closed; its pane is gone.`);
    return this.opts.runtime.read(rec.paneId, lines);
  }

  async close(agentId: unknown): Promise<CloseOutcome> {
    const rec = await this.find(agentId);
    if (rec.owner !== this.opts.owner) {
      throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may close it.`);
    }
    if (rec.state === "closed") return { agentId: rec.agentId, cancelledPromptIds: [], alreadyClosed: true };
    const cancelled: string[] = [];
    if (rec.activePromptId) {
      const active = this.registry.prompts.get(rec.activePromptId);
      if (active && !active.settled) await this.settleFromDisk(rec, active);
      if (active && !active.settled) {
        this.settle(active, { status: "cancelled", error: "[cancelled] the sheep was closed before it answered." });
        cancelled.push(active.promptId);
      }
    }
    await this.opts.runtime.close(rec.paneId, rec.agentId);
    await this.confirmGone(rec);
    rec.state = "closed";
    delete rec.activePromptId;
    this.unsubscribe.get(rec.agentId)?.();
    this.unsubscribe.delete(rec.agentId);
    // Only now that the pane is confirmed gone can nothing still be reading these files.
    await this.opts.host.cleanup(rec.agentId);
    this.bells.ring(rec.agentId);
    await this.changed();
    return { agentId: rec.agentId, cancelledPromptIds: cancelled, alreadyClosed: false };
  }

  /** Drops records of sheep whose panes are gone; returns their ids. */
  async prune(): Promise<string[]> {
    const removed: string[] = [];
    for (const rec of [...this.registry.agents.values()]) {
      if (rec.state === "closed") {
        this.forget(rec);
        continue;
      }
      if ((await this.liveness.fresh(rec)) === "gone") removed.push(...(await this.dropGone(rec)));
    }
    await this.changed();
    return removed;
  }

  /** A sheep whose pane is gone: settle what it owed from its files, then forget it. */
  private async dropGone(rec: AgentRecord): Promise<string[]> {
    if (rec.activePromptId) {
      const p = this.registry.prompts.get(rec.activePromptId);
      if (p && !p.settled) await this.settleFromDisk(rec, p);
      if (p && !p.settled) this.settle(p, { status: "failed", error: `[pane_gone] the pane of ${rec.agentId} is gone.` });
    }
    this.unsubscribe.get(rec.agentId)?.();
    this.unsubscribe.delete(rec.agentId);
    await this.opts.host.cleanup(rec.agentId).catch(() => undefined);
    this.forget(rec);
    return [rec.agentId];
  }

  /**
   * The herd as the records and the sheep's files say, without asking the multiplexer: cheap
   * enough to refresh a widget every second.
   */
  async peek(): Promise<(AgentStatus & { promptSubmittedAt?: string })[]> {
    const live = [...this.registry.agents.values()].filter((a) => a.state !== "closed");
    return Promise.all(
      live.map(async (rec) => {
        const active = rec.activePromptId ? this.registry.prompts.get(rec.activePromptId) : undefined;
        // A dialog in the sheep opens and closes with no tool call to notice it: the sheep's report
        // decides between working, blocked and idle here too.
        const snap = await this.refresh(rec).catch(() => undefined);
        if (snap) this.deriveState(rec, snap, rec.state !== "exited");
        const pending = active && !active.settled ? active : undefined;
        return {
          ...this.describe(rec, rec.state !== "exited"),
          ...(pending ? { promptSubmittedAt: pending.submittedAt } : {}),
        };
      }),
    );
  }

  // ---------------------------------------------------------------------------------------

  /**
   * What a long session keeps is bounded: the newest closed sheep (so their ids still answer
   * "closed") and, per sheep, every unsettled prompt and the newest settled ones. An id that
   * fell out answers as unknown.
   */
  private bound() {
    // Maps keep insertion order, which is creation and submission order: newest last. (Times
    // would tie within a millisecond.)
    const closed = [...this.registry.agents.values()].filter((a) => a.state === "closed");
    for (const rec of closed.slice(0, Math.max(0, closed.length - MAX_CLOSED_KEPT))) this.forget(rec);
    const settled = new Map<string, PromptRecord[]>();
    for (const p of this.registry.prompts.values()) {
      if (!p.settled) continue;
      const list = settled.get(p.agentId) ?? [];
      list.push(p);
      settled.set(p.agentId, list);
    }
    for (const list of settled.values()) {
      for (const p of list.slice(0, Math.max(0, list.length - MAX_SETTLED_KEPT))) this.registry.prompts.delete(p.promptId);
    }
  }

  private forget(rec: AgentRecord) {
    this.registry.agents.delete(rec.agentId);
    this.forgotten.add(rec.agentId);
    for (const [id, p] of this.registry.prompts) if (p.agentId === rec.agentId) this.registry.prompts.delete(id);
  }

  private pickLabel(wanted: string | undefined, name: string): string {
    if (wanted !== undefined) {
      const label = wanted.trim();
      const bad = labelProblem(label);
      if (bad) throw new ShepherdError("invalid_params", `label ${bad}; pick a plain one.`);
      if (this.registry.labelTaken(label)) {
        throw new ShepherdError("invalid_params", `label "${label}" is already used by a live sheep; pick another.`);
      }
      return label;
    }
    for (let n = 1; ; n++) {
      const label = n === 1 ? name : `${name}-${n}`;
      if (!this.registry.labelTaken(label)) return label;
    }
  }

  private refuseIfGone(rec: AgentRecord) {
    if (rec.state === "closed") {
      throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) is closed; start a new one.`);
    }
    if (rec.state === "exited") {
      throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) has exited; close it and start a new one.`);
    }
  }

  private async untilReady(rec: AgentRecord, signal?: AbortSignal): Promise<void> {
    const deadline = this.clock.now() + this.opts.startTimeoutMs;
    for (;;) {
      const snap = await this.opts.host.snapshot(rec.agentId);
      if (snap.exited) throw new ShepherdError("start_failed", `pi exited before it was ready (exit code ${snap.exited.code ?? snap.exited.signal}).`);
      if (snap.ready) {
        // The sheep just wrote from inside its pane: an answer up to an interval old will do.
        if ((await this.liveness.get(rec)) !== "gone") return;
        throw new ShepherdError("start_failed", "the pane vanished while the sheep was starting.");
      }
      if ((await this.liveness.get(rec)) === "gone") {
        throw new ShepherdError("start_failed", "the pane vanished while the sheep was starting.");
      }
      const left = deadline - this.clock.now();
      if (left <= 0) throw new ShepherdError("start_failed", `the sheep was not ready after ${this.opts.startTimeoutMs / 1000} s.`);
      await this.bells.next([rec.agentId], Math.min(left, this.opts.livenessIntervalMs), this.clock, signal);
    }
  }

  /** Start failed: keep the reason and the pane's last words, close only our pane, then throw. */
  private async abandon(rec: AgentRecord, cause: unknown): Promise<never> {
    const lines = await this.opts.runtime.read(rec.paneId, 30).catch(() => "");
    await this.opts.runtime.close(rec.paneId, rec.agentId).catch(() => undefined);
    await this.confirmGone(rec).catch(() => undefined);
    this.unsubscribe.get(rec.agentId)?.();
    this.unsubscribe.delete(rec.agentId);
    await this.opts.host.cleanup(rec.agentId).catch(() => undefined);
    this.forget(rec);
    await this.changed();
    const reason = cause instanceof ShepherdError && cause.code === "start_failed"
      ? cause.message.replace(/^\[start_failed\] /, "")
      : (signalReasonText(cause) ?? errorText(cause));
    const tail = lines.trim() ? `\nLast lines of its pane:\n${lines.trimEnd().split("\n").slice(-15).join("\n")}` : "";
    throw new ShepherdError("start_failed", `sheep "${rec.label}" (${rec.agent}) did not start: ${reason}${tail}`, { cause });
  }

  private async confirmGone(rec: AgentRecord): Promise<void> {
    for (let i = 0; i < 20; i++) {
      if ((await this.liveness.fresh(rec)) === "gone") return;
      await this.clock.sleep(100);
    }
    throw new ShepherdError("runtime_error", `the pane ${rec.paneId} of ${rec.agentId} is still there after closing it; its files are kept.`);
  }

  private async waitOne(promptId: string, deadline: number, signal?: AbortSignal): Promise<WaitItem> {
    const found = this.registry.prompt(promptId);
    if ("missing" in found) return { promptId, agentId: "", status: "failed", error: found.missing };
    const prompt = found;
    const rec = this.registry.agents.get(prompt.agentId);
    for (;;) {
      if (prompt.settled) return prompt.settled;
      if (!rec || rec.state === "closed") {
        return this.settle(prompt, { status: "cancelled", error: "[cancelled] the sheep was closed." });
      }
      const snap = await this.settleFromDisk(rec, prompt);
      if (prompt.settled) return prompt.settled;
      if (snap.exited) {
        rec.state = "exited";
        return this.settle(prompt, {
          status: "failed",
          error: `[pi_exited] pi in sheep ${rec.agentId} exited (code ${snap.exited.code ?? snap.exited.signal}) before answering.`,
        });
      }
      if ((await this.liveness.get(rec)) === "gone") {
        // The result may have landed just before the pane went: look once more.
        await this.settleFromDisk(rec, prompt);
        if (prompt.settled) return prompt.settled;
        rec.state = "exited";
        return this.settle(prompt, { status: "failed", error: `[pane_gone] the pane of sheep ${rec.agentId} (${rec.label}) is gone.` });
      }
      if (snap.blocked !== undefined) {
        return { promptId, agentId: rec.agentId, status: "blocked", error: snap.blocked || "blocked" };
      }
      const left = deadline - this.clock.now();
      if (left <= 0) {
        return { promptId, agentId: rec.agentId, status: "timeout", error: "[timeout] still working; wait again with the same promptId." };
      }
      try {
        await this.bells.next([rec.agentId], Math.min(left, this.opts.livenessIntervalMs), this.clock, signal);
      } catch {
        throw new ShepherdError("aborted", "the wait was cancelled; the prompts are still pending, so wait for them again later.");
      }
    }
  }

  /** Reads what the sheep wrote; settles the prompt when its result is there. */
  /** Settles the active prompt when its result is on disk, and returns the sheep's latest report. */
  private async refresh(rec: AgentRecord): Promise<SheepSnapshot> {
    const active = rec.activePromptId ? this.registry.prompts.get(rec.activePromptId) : undefined;
    return active && !active.settled ? this.settleFromDisk(rec, active) : this.opts.host.snapshot(rec.agentId);
  }

  private async settleFromDisk(rec: AgentRecord, prompt: PromptRecord): Promise<SheepSnapshot> {
    const result = await this.opts.host.result(rec.agentId, prompt.promptId);
    if (result) this.settle(prompt, fromResult(result, prompt, rec));
    const snap = await this.opts.host.snapshot(rec.agentId);
    return snap;
  }

  private settle(prompt: PromptRecord, outcome: Omit<WaitItem, "promptId" | "agentId">): WaitItem {
    if (prompt.settled) return prompt.settled;
    prompt.settled = { promptId: prompt.promptId, agentId: prompt.agentId, ...outcome };
    const rec = this.registry.agents.get(prompt.agentId);
    if (rec && rec.activePromptId === prompt.promptId && rec.state === "working") rec.state = "idle";
    this.bells.ring(prompt.agentId);
    void this.changed();
    return prompt.settled;
  }

  private deriveState(rec: AgentRecord, snap: SheepSnapshot, paneAlive: boolean) {
    if (rec.state === "closed") return;
    if (!paneAlive || snap.exited) {
      rec.state = "exited";
      return;
    }
    if (rec.state === "starting") return;
    if (snap.blocked !== undefined) {
      rec.state = "blocked";
      return;
    }
    const active = rec.activePromptId ? this.registry.prompts.get(rec.activePromptId) : undefined;
    rec.state = active && !active.settled ? "working" : "idle";
  }

  private describe(rec: AgentRecord, paneAlive: boolean, runtimeStatus?: string): AgentStatus {
    const active = rec.activePromptId ? this.registry.prompts.get(rec.activePromptId) : undefined;
    return {
      agentId: rec.agentId,
      agent: rec.agent,
      label: rec.label,
      runtime: rec.runtime,
      state: rec.state,
      ...(active && !active.settled ? { activePromptId: active.promptId } : {}),
      paneAlive,
      ...(runtimeStatus !== undefined ? { runtimeStatus } : {}),
      createdAt: rec.createdAt,
    };
  }
}

function fromResult(r: SheepResult, prompt: PromptRecord, rec: AgentRecord): Omit<WaitItem, "promptId" | "agentId"> {
  const started = r.startedAt ? Date.parse(r.startedAt) : Date.parse(prompt.submittedAt);
  const finished = r.finishedAt ? Date.parse(r.finishedAt) : NaN;
  const error =
    r.status === "failed"
      ? `[provider_error] ${r.errorMessage ?? "the model call failed"}`
      : r.status === "cancelled"
        ? `[cancelled] ${r.errorMessage ?? "the turn was aborted in the sheep"}`
        : undefined;
  return {
    status: r.status,
    text: r.text,
    ...(error !== undefined ? { error } : {}),
    ...(r.stopReason !== undefined ? { stopReason: r.stopReason } : {}),
    ...(r.usage !== undefined ? { usage: r.usage } : {}),
    ...(r.model !== undefined ? { model: r.model } : {}),
    sessionPath: r.sessionPath ?? rec.sessionPath,
    ...(Number.isFinite(finished - started) ? { durationMs: finished - started } : {}),
  };
}

function signalReasonText(e: unknown): string | undefined {
  if (e instanceof DOMException && e.name === "AbortError") return "the start was cancelled";
  return undefined;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
