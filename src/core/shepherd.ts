/**
 * The facade the tool, the command and delegation call: the primitives over a runtime and a
 * sheep host. Each job lives in its own module; this class only holds the shared state (Herd).
 * Knows nothing of pi, herdr or tmux.
 */
import { close, prune } from "./close.js";
import { Herd, type ShepherdOptions } from "./herd.js";
import { attach, othersSheep, type AttachReport } from "./persistence.js";
import { prompt } from "./prompt.js";
import type { Registry } from "./registry.js";
import { resumable } from "./resume.js";
import { start } from "./start.js";
import type {
  AgentRecord,
  AgentStatus,
  CloseOutcome,
  Conversation,
  ResumeCard,
  SheepView,
  StartedAgent,
  StartRequest,
  SubmittedPrompt,
  WaitItem,
} from "./types.js";
import { herdStatus, herdViews, readConversation, readScreen, refreshFromFiles, sheepView, status } from "./views.js";
import { wait, type WaitOptions } from "./wait.js";

export type { ShepherdOptions } from "./herd.js";
export { MAX_CLOSED_KEPT, MAX_SETTLED_KEPT } from "./herd.js";
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

  /** Updates the records from the sheep's files alone (no multiplexer call); see views.refreshFromFiles. */
  refreshFromFiles(): Promise<SheepView[]> {
    return refreshFromFiles(this.herdState);
  }

  /** The live sheep as every view shows them, from the records as they are now. */
  views(): SheepView[] {
    return herdViews(this.herdState.registry);
  }

  /** One sheep as the live views show it; undefined once it is closed or forgotten. */
  view(agentId: string): SheepView | undefined {
    const rec = this.herdState.registry.agents.get(agentId);
    return rec && rec.state !== "closed" ? sheepView(this.herdState.registry, rec) : undefined;
  }

  /** Sheep of other shepherds on the same agent dir, read-only. */
  others(): Promise<AgentRecord[]> {
    return othersSheep(this.herdState);
  }

  read(agentId: unknown, lines: number): Promise<string> {
    return readScreen(this.herdState, agentId, lines);
  }

  /** The last turns of the sheep's conversation, from its session file. */
  conversation(agentId: unknown, turns: number): Promise<Conversation> {
    return readConversation(this.herdState, agentId, turns);
  }

  close(agentId: unknown): Promise<CloseOutcome> {
    return close(this.herdState, agentId);
  }

  prune(): Promise<string[]> {
    return prune(this.herdState);
  }
}
