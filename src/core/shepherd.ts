/**
 * The facade the tool, the command and delegation call: the primitives over a runtime and a
 * sheep host. Each job lives in its own module; this class only holds the shared state (Herd).
 * Knows nothing of pi, herdr or tmux.
 */
import { close, type PruneOutcome, prune } from "./close.js";
import { type LatestEvidence, latestEvidence } from "./evidence.js";
import { Herd, type ShepherdOptions } from "./herd.js";
import { attach, othersSheep, type AttachReport } from "./persistence.js";
import { type LandOutcome, land } from "./land.js";
import { prompt } from "./prompt.js";
import type { Registry } from "./registry.js";
import { resumable } from "./resume.js";
import { start } from "./start.js";
import type { AgentRecord, AgentStatus, CloseOptions, CloseOutcome, ResumeCard, StartedAgent, StartRequest, SubmittedPrompt, WaitItem } from "./types.js";
import { herdFromFiles, herdStatus, readScreen, status } from "./views.js";
import { wait, type WaitOptions } from "./wait.js";

export type { ShepherdOptions } from "./herd.js";
export { MAX_CLOSED_KEPT, MAX_SETTLED_KEPT } from "./herd.js";
export type { KeptWorktree, PruneOutcome } from "./close.js";
export type { LatestEvidence } from "./evidence.js";
export type { LandOutcome } from "./land.js";
export type { AttachReport } from "./persistence.js";
export type { WaitProgress } from "./wait.js";

export class Shepherd {
  private readonly herdState: Herd;

  constructor(options: ShepherdOptions) {
    this.herdState = new Herd(options);
  }

  get registry(): Registry {
    return this.herdState.registry;
  }

  get runtimeName() {
    return this.herdState.opts.runtime.name;
  }

  get owner() {
    return this.herdState.opts.owner;
  }

  /** Takes back this shepherd's records after a reload, and those of a shepherd that died. */
  attach(): Promise<AttachReport> {
    return attach(this.herdState);
  }

  /** Stops watching the sheep's files; the sheep themselves keep running. */
  dispose(): void {
    this.herdState.unwatchAll();
  }

  start(req: StartRequest, signal?: AbortSignal): Promise<StartedAgent> {
    return start(this.herdState, req, signal);
  }

  /** The card of a closed or exited sheep, named by id or label, once it is sure it may be resumed; start it with `resume`. */
  resumable(target: string): Promise<ResumeCard> {
    return resumable(this.herdState, target);
  }

  prompt(agentId: unknown, message: unknown): Promise<SubmittedPrompt> {
    return prompt(this.herdState, agentId, message);
  }

  wait(promptIds: readonly string[], opts?: WaitOptions): Promise<WaitItem[]> {
    return wait(this.herdState, promptIds, opts);
  }

  status(agentId: unknown): Promise<AgentStatus> {
    return status(this.herdState, agentId);
  }

  /** Every sheep that is not closed, each asked about as status would. */
  herd(): Promise<AgentStatus[]> {
    return herdStatus(this.herdState);
  }

  /** The herd from records and files alone, for the widget; see views.herdFromFiles. */
  herdFromFiles(): Promise<(AgentStatus & { promptSubmittedAt?: string })[]> {
    return herdFromFiles(this.herdState);
  }

  /** Sheep of other shepherds on the same agent dir, read-only. */
  others(): Promise<AgentRecord[]> {
    return othersSheep(this.herdState);
  }

  read(agentId: unknown, lines: number): Promise<string> {
    return readScreen(this.herdState, agentId, lines);
  }

  close(agentId: unknown, options?: CloseOptions): Promise<CloseOutcome> {
    return close(this.herdState, agentId, options);
  }

  prune(): Promise<PruneOutcome> {
    return prune(this.herdState);
  }

  /** The evidence of the sheep's newest settled prompt. */
  diff(agentId: unknown): Promise<LatestEvidence> {
    return latestEvidence(this.herdState, agentId);
  }

  /** Brings an isolated sheep's work into the branch checked out in the user's checkout. */
  land(agentId: unknown, options: { squash: boolean }): Promise<LandOutcome> {
    return land(this.herdState, agentId, options);
  }
}
