import type { AgentId, PromptId } from "../../domain/ids.ts";
import pLimit from "p-limit";
import { systemClock, type Clock } from "../herd/clock.ts";
import { every } from "../herd/signals.ts";
import { type DelegateProgress, Tracking } from "./tracking.ts";
import { errorText, isShepherdError, ShepherdError } from "../../domain/errors.ts";
import type { Registry } from "../herd/registry.ts";
import type { WaitOptions } from "../prompts/wait.ts";
import type { Worktree } from "../../ports/workspace.ts";
import type { Direction, Placement } from "../../ports/runtime.ts";
import type {
  HeldBudget,
  AgentDefinition,
  CloseOptions,
  CloseOutcome,
  DelegateMode,
  Evidence,
  PromptOptions,
  SheepView,
  StartedAgent,
  StartRequest,
  SubmittedPrompt,
  Usage,
  WaitItem,
  WaitStatus,
} from "../../ports/types.ts";

/**
 * One-shot delegation (single, parallel, chain) built only from start, prompt, wait and close,
 * so a delegated sheep is the same visible, persistent agent as any other while it works.
 */

export type { DelegateMode } from "../../ports/types.ts";

/**
 * The primitives a delegation runs on, passed in: the facade Shepherd is one, so delegation sits
 * below it and imports nothing of it.
 */
export interface Primitives {
  readonly registry: Pick<Registry, "agents">;
  start(req: StartRequest, signal?: AbortSignal): Promise<StartedAgent>;
  prompt(agentId: AgentId, message: string, opts?: PromptOptions): Promise<SubmittedPrompt>;
  wait(promptIds: readonly PromptId[], opts?: WaitOptions): Promise<WaitItem[]>;
  close(agentId: AgentId, options?: CloseOptions): Promise<CloseOutcome>;
  /**
   * The delegation is done with a sheep whose answer is in: it is closed (or goes back to the warm
   * pool) after this returns, off the call's path. A close that fails keeps its record, as close does.
   */
  release?(agentId: AgentId, started: StartRequest): void;
  /** A task's reservation of the day's budget whose start never came (a chain that stopped, an abort) is let go. */
  readonly spend?: { release(held: HeldBudget): void };
  view(agentId: string): SheepView | undefined;
}

export interface DelegateTask {
  definition: AgentDefinition;
  task: string;
  cwd: string;
  /** The machine it runs on (a name of the `hosts` setting); absent: this machine. */
  host?: string;
  /** The sheep works in a worktree of its own; it is kept after the sheep closes, for land. */
  isolate?: boolean;
  /** Its pi runs in bubblewrap. */
  sandbox?: true;
  /** Reserved for it before the delegation began (Shepherd.reserve; spec: Budgets). */
  budget?: HeldBudget;
  /** Where its pane goes (the settings' placement and direction), as for any start. */
  placement?: Placement;
  direction?: Direction;
}

export interface DelegateItem {
  agent: string;
  /** The sheep's label: two sheep of one agent in one delegation are told apart by it. */
  label?: string;
  task: string;
  status: WaitStatus;
  text?: string;
  error?: string;
  agentId?: string;
  /** The host the task's sheep ran on (absent: this machine), as every result names it. */
  host?: string;
  usage?: Usage;
  step?: number;
  evidence?: Evidence;
  evidenceError?: string;
  worktree?: Worktree;
}

export interface DelegateOptions {
  keepOpen: boolean;
  maxParallel: number;
  waitTimeoutSec: number;
  signal?: AbortSignal;
  onProgress?: (p: DelegateProgress) => void;
  now?: () => number;
  clock?: Clock;
  /** Told as each task gets its sheep, its prompt, and its outcome (a background delegation records them). */
  hooks?: DelegateHooks;
  /**
   * Aborted when the delegation is to stop where it is without closing anything (the shepherd is
   * reloading): what runs is left for the next shepherd to finish.
   */
  detach?: AbortSignal;
  /** Runs while the shepherd talks on: a sheep that waits on a question is not a finished task. */
  background?: boolean;
}

export interface DelegateHooks {
  started?(index: number, agentId: string): void;
  prompted?(index: number, promptId: string): void;
  finished?(index: number, item: DelegateItem): void;
  /** A background delegation's prompts carry its id from the moment they exist. */
  delegationId?: string;
}

export class Delegation {
  private readonly tracking: Tracking;
  /** Tasks that run from the start (the rest wait for a place): once each has its prompt, the first wave is out. */
  private readonly waveSize: number;
  private waveLeft: Set<number>;
  private waveDone!: () => void;
  /** Resolves once every task of the first wave has its prompt (or ended): a background delegation returns then. */
  readonly firstWave: Promise<void>;

  constructor(
    private readonly shepherd: Primitives,
    private readonly mode: DelegateMode,
    private readonly tasks: DelegateTask[],
    private readonly o: DelegateOptions,
  ) {
    this.tracking = new Tracking(
      mode,
      tasks.map((t) => t.definition.name),
      (agentId) => shepherd.view(agentId),
      o.now ?? Date.now,
      o.onProgress,
    );
    this.waveSize = mode === "parallel" ? Math.min(tasks.length, Math.max(1, o.maxParallel)) : 1;
    this.waveLeft = new Set(Array.from({ length: this.waveSize }, (_, i) => i));
    this.firstWave = new Promise((resolve) => (this.waveDone = resolve));
  }

  private out(i: number): void {
    if (!this.waveLeft.delete(i) || this.waveLeft.size > 0) return;
    this.waveDone();
  }

  async run(): Promise<DelegateItem[]> {
    // A sheep's view changes with its own files too (a look elsewhere derives its state): the
    // records are looked at each second; only a change goes out.
    const stopTicking = this.tracking.heard ? every(this.o.clock ?? systemClock, 1000, () => this.tracking.report()) : () => undefined;
    try {
      if (this.mode === "chain") return await this.chain();
      const limit = pLimit(Math.max(1, this.o.maxParallel));
      this.tracking.report();
      return await Promise.all(this.tasks.map((t, i) => limit(() => this.one(i, t.task))));
    } finally {
      stopTicking();
      // A task that never had a sheep (a chain that stopped, an abort) spent nothing: its reservation goes.
      for (const [i, t] of this.tasks.entries()) if (t.budget && this.tracking.tracked[i]!.agentId === undefined) this.shepherd.spend?.release(t.budget);
      this.waveDone();
    }
  }

  private async chain(): Promise<DelegateItem[]> {
    const out: DelegateItem[] = [];
    let previous = "";
    let worktree: Worktree | undefined;
    this.tracking.report();
    for (const [i, t] of this.tasks.entries()) {
      // Every {previous} gets the exact final text of the step before; the first step gets "".
      const task = t.task.split("{previous}").join(previous);
      // An isolated step goes on from the isolated step before it: its files as that step left them.
      const item = { ...(await this.one(i, task, t.isolate ? worktree : undefined)), step: i + 1 };
      out.push(item);
      if (item.status !== "completed") break;
      previous = item.text ?? "";
      worktree = item.worktree;
    }
    return out;
  }

  private async one(i: number, task: string, from?: Worktree): Promise<DelegateItem> {
    const t = this.tasks[i]!;
    const track = this.tracking.tracked[i]!;
    const base = { agent: t.definition.name, task, ...(t.host !== undefined ? { host: t.host } : {}) };
    const hooks = this.o.hooks;
    const detached = () => this.o.detach?.aborted === true;
    const finish = (result: DelegateItem): DelegateItem => {
      const item = { ...result, ...(track.label ? { label: track.label } : {}) };
      track.state = item.status;
      this.tracking.report();
      // A detached task is not over: the next shepherd finishes it, so nothing is recorded here.
      if (!detached()) hooks?.finished?.(i, item);
      this.out(i);
      return item;
    };
    if (this.o.signal?.aborted || detached())
      return finish({ ...base, status: "cancelled", error: "[cancelled] the delegation was aborted before this task started." });
    track.state = "starting";
    this.tracking.report();
    let agentId: AgentId | undefined;
    let worktree: Worktree | undefined;
    try {
      const onRecorded = (id: AgentId, label: string) => {
        // From here on the item shows its sheep as the widget does: one state, one clock.
        track.agentId = id;
        track.label = label;
        this.tracking.report();
      };
      const isolation = t.isolate ? { isolate: true, ...(from ? { isolateFrom: from } : {}) } : {};
      const delegated = hooks?.delegationId ? { delegationId: hooks.delegationId } : {};
      // The task goes with the start: a cold sheep finds it in its inbox as pi becomes ready.
      const req: StartRequest = {
        definition: t.definition,
        cwd: t.cwd,
        ...(t.host !== undefined ? { host: t.host } : {}),
        ...(t.placement !== undefined ? { placement: t.placement } : {}),
        ...(t.direction !== undefined ? { direction: t.direction } : {}),
        onRecorded,
        ...isolation,
        ...(t.sandbox ? { sandbox: true as const } : {}),
        prompt: { text: task, ...delegated },
        ...(t.budget ? { budget: t.budget } : {}),
      };
      const started = await this.shepherd.start(req, this.o.signal);
      agentId = started.agentId;
      worktree = started.worktree;
      track.state = "working";
      hooks?.started?.(i, agentId);
      const promptId = started.promptId ?? (await this.shepherd.prompt(agentId, task, delegated)).promptId;
      hooks?.prompted?.(i, promptId);
      this.tracking.report();
      this.out(i);
      const r = await this.answer(promptId);
      const item: DelegateItem = {
        ...base,
        status: r!.status,
        agentId,
        ...(r!.text !== undefined ? { text: r!.text } : {}),
        ...(r!.error !== undefined ? { error: r!.error } : {}),
        ...(r!.usage !== undefined ? { usage: r!.usage } : {}),
        ...(r!.evidence !== undefined ? { evidence: r!.evidence } : {}),
        ...(r!.evidenceError !== undefined ? { evidenceError: r!.evidenceError } : {}),
        ...(worktree !== undefined ? { worktree } : {}),
      };
      // The answer is all the caller waits for: the pane, pi's exit and the files go after.
      // A sheep that can come back goes to the warm pool in a fresh conversation instead.
      if (!this.o.keepOpen) this.releaseQuietly(agentId, req);
      return finish(item);
    } catch (e) {
      // A start that failed but could not close its pane keeps its sheep recorded: the item names it.
      agentId ??= track.agentId !== undefined && this.shepherd.registry.agents.has(track.agentId) ? track.agentId : undefined;
      if (detached()) return finish({ ...base, status: "cancelled", ...(agentId ? { agentId } : {}), error: "[cancelled] the shepherd stopped." });
      const aborted = this.o.signal?.aborted || isShepherdError(e, "aborted");
      // An aborted delegation closes what it started, whatever keepOpen says: nobody will wait for it.
      if (agentId && (aborted || !this.o.keepOpen)) await this.closeQuietly(agentId);
      return finish({
        ...base,
        status: aborted ? "cancelled" : "failed",
        ...(agentId ? { agentId } : {}),
        ...(worktree !== undefined ? { worktree } : {}),
        error: aborted ? "[cancelled] the delegation was aborted." : errorText(e),
      });
    }
  }

  /**
   * The task's result. A background delegation's own waits are no reader of the conversation (they
   * neither hold nor claim anything), and a sheep that asks its shepherd something keeps its task
   * going: the question is pushed, and the delegation waits for the answer's effect.
   */
  private async answer(promptId: PromptId): Promise<WaitItem> {
    const clock = this.o.clock ?? systemClock;
    const deadline = clock.now() + this.o.waitTimeoutSec * 1000;
    for (;;) {
      const left = Math.max(0, (deadline - clock.now()) / 1000);
      const [r] = await this.shepherd.wait([promptId], {
        timeoutSec: left,
        ...(this.o.signal ? { signal: this.o.signal } : {}),
        ...(this.o.background ? { quiet: true } : {}),
      });
      if (!this.o.background || r!.status !== "blocked" || left <= 0) return r!;
      await clock.sleep(1000, this.o.signal).catch(() => undefined);
      if (this.o.signal?.aborted) throw new ShepherdError("aborted", "the delegation was cancelled.");
    }
  }

  private async closeQuietly(agentId: AgentId) {
    await this.shepherd.close(agentId).catch(() => undefined);
  }

  private releaseQuietly(agentId: AgentId, started: StartRequest): void {
    if (this.shepherd.release) this.shepherd.release(agentId, started);
    else void this.closeQuietly(agentId);
  }
}
