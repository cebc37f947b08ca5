/**
 * The facade the tool, the command and delegation call: the primitives over a runtime and a
 * sheep-files port. Each job lives in its own module; this class only holds the shared state (Herd).
 * Knows nothing of pi, herdr or tmux.
 */
import type { AgentId, MessageId, PromptId } from "../domain/ids.ts";
import { delegateInBackground, type BackgroundOptions, type BackgroundStarted } from "./async/background.ts";
import { close, type PruneOutcome, prune } from "./lifecycle/close.ts";
import { type LeftoverPane, type LeftoverSpec, leftovers } from "./lifecycle/leftovers.ts";
import { Releases } from "./lifecycle/release.ts";
import type { BranchState, MarkedWorktree } from "../ports/workspace.ts";
import { Courier, type CourierSink } from "./async/courier.ts";
import type { DelegateTask } from "./delegation/delegate.ts";
import { type LatestEvidence, latestEvidence } from "./prompts/evidence.ts";
import { Herd, type ShepherdOptions, type UsageTotals } from "./herd/herd.ts";
import { forPerson, pendingIds } from "./prompts/ledger.ts";
import { listMessages, reply, type ListedMessage, type ReplyOutcomeView } from "./async/mail.ts";
import { othersSheep } from "./herd/owners.ts";
import { attach, type AttachReport } from "./lifecycle/persistence.ts";
import { type LandOutcome, land } from "./prompts/land.ts";
import { type SyncOutcome, sync } from "./prompts/sync.ts";
import { branchState } from "./prompts/branch-state.ts";
import { prompt } from "./prompts/prompt.ts";
import { type InterruptOutcome, interrupt } from "./prompts/interrupt.ts";
import { type QuitOutcome, quit } from "./lifecycle/quit.ts";
import type { Registry } from "./herd/registry.ts";
import { resumable } from "./lifecycle/resume.ts";
import { start } from "./lifecycle/start.ts";
import { terminalOf } from "./lifecycle/terminal.ts";
import type {
  AgentRecord,
  AgentStatus,
  CloseOptions,
  CloseOutcome,
  Conversation,
  DelegateMode,
  Edge,
  PromptOptions,
  ResumeCard,
  SheepView,
  StartedAgent,
  StartRequest,
  SubmittedPrompt,
  WaitItem,
} from "../ports/types.ts";
import { herdStatus, herdViews, readEgress, readScreen, refreshFromFiles, sheepView, status, type HerdView } from "./prompts/views.ts";
import { readConversationSeen, wait, type WaitOptions } from "./prompts/wait.ts";
import { actingFrom } from "./herd/edge.ts";
import { WarmPool, type WarmState } from "./lifecycle/warm.ts";
import type { WarmConfig } from "./lifecycle/warm-fit.ts";
import type { SpeculativeWant } from "./lifecycle/warm-speculation.ts";

export { MAX_CLOSED_KEPT, MAX_QUEUED, MAX_SETTLED_KEPT } from "../domain/bounds.ts";
export type { KeptWorktree, PruneOutcome } from "./lifecycle/close.ts";
export type { LatestEvidence } from "./prompts/evidence.ts";
export type { LandOutcome } from "./prompts/land.ts";
export type { KeptAtQuit, QuitOutcome } from "./lifecycle/quit.ts";
export type { SyncOutcome } from "./prompts/sync.ts";
export type { AttachReport } from "./lifecycle/persistence.ts";
export type { WaitProgress } from "./prompts/wait.ts";
export type { CourierSink, Notice, PersonNote, Push, PushedItem } from "./async/courier.ts";
export type { WarmCount, WarmState } from "./lifecycle/warm.ts";
export type { WarmConfig } from "./lifecycle/warm-fit.ts";

export class Shepherd {
  private readonly herdState: Herd;
  private readonly courier: Courier;
  private readonly pool: WarmPool;
  private readonly releases: Releases;
  readonly spend: Herd["spend"];

  constructor(options: ShepherdOptions) {
    this.herdState = new Herd(options);
    this.courier = new Courier(this.herdState);
    this.pool = new WarmPool(this.herdState);
    this.releases = new Releases(this.herdState, this.pool);
    this.spend = this.herdState.spend; // the herd's spend (spec: Budgets): reserve before a start, release, the day's numbers
  }

  /** Keeps ready sheep per definition for starts that match them; sizes of {} close them all. */
  keepWarm = (config: WarmConfig): void => this.pool.configure(config);

  /** Boots ahead the sheep a call the model is still writing will start; the call takes them. */
  speculate = (wants: readonly SpeculativeWant[]): Promise<void> => this.pool.speculate(wants);

  /** Ready and booting warm sheep per definition name, and why a name is not warm. */
  warm = (): WarmState => ({ counts: this.pool.counts(), problems: Object.fromEntries(this.pool.problems) });

  /**
   * The shepherd quits: closes each sheep with nothing in flight and keeps running, for the next
   * shepherd to adopt, each that works or holds a result nobody received. Then dispose.
   */
  async quit(): Promise<QuitOutcome> {
    await this.released();
    return quit(this.herdState);
  }

  /** Closes every warm sheep (the shepherd quits). */
  closeWarm = (): Promise<void> => this.pool.closeAll();

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
  attach = (): Promise<AttachReport> => attach(this.herdState);

  /** From now on, notified prompts' results, sheep's questions and background delegations go to this sink, each once (what waited first). */
  deliverTo(sink: CourierSink): void {
    this.courier.attach(sink);
  }

  /**
   * Stops everything this shepherd does in the background and writes its records a last time;
   * nothing is written after. The sheep keep running, for a reloaded shepherd to take back.
   */
  async dispose(): Promise<void> {
    const herd = this.herdState;
    herd.stopBackground(); // a warm sheep still booting stops here, and closes its pane
    await this.released();
    await this.pool.closeAll();
    await this.courier.stop();
    await Promise.allSettled([...this.courier.runners.values()]);
    await Promise.all([herd.persist(), herd.spend.flushed()]); // the day's ledger gets every total told so far
    herd.closeWrites();
    herd.unwatchAll();
  }

  start(req: StartRequest, signal?: AbortSignal): Promise<StartedAgent> {
    return start(this.herdState, req, signal);
  }

  /** The card of a closed or exited sheep, named by id or label, once it is sure it may be resumed; start it with `resume`. */
  resumable(target: string): Promise<ResumeCard> {
    return resumable(this.herdState, target);
  }

  prompt(agentId: AgentId, message: string, opts?: PromptOptions): Promise<SubmittedPrompt> {
    return prompt(this.herdState, agentId, message, opts);
  }

  /** Aborts the sheep's running turn (its prompt settles cancelled); the sheep stays. */
  interrupt(agentId: AgentId): Promise<InterruptOutcome> {
    return interrupt(this.herdState, agentId);
  }

  /** Messages of one sheep (or of every live sheep); all listed are read from now on. */
  messages(agentId: AgentId | undefined, unreadOnly = false): Promise<ListedMessage[]> {
    return listMessages(this.herdState, agentId, unreadOnly);
  }

  /** The reply a sheep's question got, as its host keeps it (none when unanswered or not known). */
  async replyText(agentId: string, messageId: string): Promise<string | undefined> {
    return (await this.herdState.opts.files.replyText?.(agentId, messageId).catch(() => undefined)) ?? undefined;
  }

  /** One sheep's messages with their read state, as `messages` lists them, but marking none read (a live view counts them). */
  messageLog(agentId: AgentId): Promise<ListedMessage[]> {
    return listMessages(this.herdState, agentId, false, false);
  }

  reply(agentId: AgentId, messageId: MessageId, text: string): Promise<ReplyOutcomeView> {
    return reply(this.herdState, agentId, messageId, text);
  }

  /** Starts a delegation that reports back by itself; returns once its first tasks have their prompts. */
  delegateInBackground(mode: DelegateMode, tasks: DelegateTask[], opts: BackgroundOptions): Promise<BackgroundStarted> {
    return delegateInBackground(this, this.herdState, this.courier, mode, tasks, opts);
  }

  wait(promptIds: readonly PromptId[], opts?: WaitOptions): Promise<WaitItem[]> {
    return wait(this.herdState, promptIds, opts);
  }

  /** The prompts not settled yet (the running one, then those queued): of this sheep, or of every live one. */
  pending(agentId?: AgentId): string[] {
    return pendingIds(this.herdState, agentId);
  }

  /** What a person's wait shows (ledger.forPerson): unseen answers to a person's prompts, then what is pending. */
  forPerson(agentId?: AgentId): string[] {
    return forPerson(this.herdState, agentId);
  }

  /** Runs fn as an action of this edge: its audit events and the prompts it sends say where they came from. */
  actingFrom<T>(edge: Edge, fn: () => T): T {
    return actingFrom(edge, fn);
  }

  status(agentId: AgentId, signal?: AbortSignal): Promise<AgentStatus> {
    return status(this.herdState, agentId, signal);
  }

  /** Every sheep that is not closed, each asked about as status would. */
  herd(signal?: AbortSignal): Promise<AgentStatus[]> {
    return herdStatus(this.herdState, signal);
  }

  /** Updates the records from the files of every sheep, or of those named (no multiplexer call); see views.refreshFromFiles. */
  refreshFromFiles(only?: ReadonlySet<string>): Promise<HerdView[]> {
    return refreshFromFiles(this.herdState, this.courier, only);
  }

  /** Calls fn with a sheep's id whenever its files change (and without one when a wait ends), until the returned function is called. */
  onChange(fn: (agentId?: string) => void): () => void {
    return this.herdState.bells.overhear(fn);
  }

  /** Calls fn after every change of the records (each write-through), until the returned function is called. */
  onRecords(fn: () => void): () => void {
    return this.herdState.onRecords(fn);
  }

  /** The live sheep as the widget shows them, from the records as they are now. */
  views(): HerdView[] {
    return herdViews(this.herdState, this.courier);
  }

  /** One sheep as every live view shows it; undefined once it is closed or forgotten. */
  view(agentId: string): SheepView | undefined {
    const rec = this.herdState.registry.agents.get(agentId);
    return rec && rec.state !== "closed" ? sheepView(this.herdState.registry, rec) : undefined;
  }

  /** Sheep of other shepherds on the same agent dir, read-only. */
  others(): Promise<AgentRecord[]> {
    return othersSheep(this.herdState);
  }

  read = (agentId: AgentId, lines: number): Promise<string> => readScreen(this.herdState, agentId, lines);
  /** The panel's live terminal of a sheep's pane: watch it, type keys into it. */
  readonly terminal = terminalOf(() => this.herdState);

  /**
   * The last turns of the sheep's conversation, from its session file. Whoever reads them saw the
   * answers in them: the newest `turns` settled prompts of the sheep count as received.
   */
  conversation(agentId: AgentId, turns: number): Promise<Conversation> {
    return readConversationSeen(this.herdState, agentId, turns);
  }

  /** What a sandboxed sheep tried to reach: its egress log's counts and last `entries` entries. */
  readonly egress = (agentId: AgentId, entries: number) => readEgress(this.herdState, agentId, entries);

  /**
   * A delegated sheep whose answer is in, off the delegation's path: back to the warm pool in a
   * fresh conversation when it was started as the pool starts its sheep and the pool has room
   * (WarmPool.giveBack), else closed. A close that fails keeps the record (close's own rule).
   */
  release(agentId: AgentId, started?: StartRequest): void {
    this.releases.release(agentId, started);
  }

  /** Every release made so far has finished (its sheep closed, or its close failed). */
  released(): Promise<void> {
    return this.releases.settled();
  }

  close(agentId: AgentId, options?: CloseOptions): Promise<CloseOutcome> {
    return close(this.herdState, agentId, options);
  }

  /** What starts cut short left, here and on every host that answers, that no record knows (read only: prune removes it). */
  leftovers(): Promise<{ specs: LeftoverSpec[]; panes: LeftoverPane[]; worktrees: MarkedWorktree[] }> {
    return leftovers(this.herdState);
  }

  prune(o: { force?: boolean } = {}): Promise<PruneOutcome> {
    return prune(this.herdState, o);
  }

  /** The evidence of the sheep's newest settled prompt. */
  diff(agentId: AgentId): Promise<LatestEvidence> {
    return latestEvidence(this.herdState, agentId);
  }

  /** Brings an isolated sheep's work into the branch checked out in the user's checkout. */
  land(agentId: AgentId, options: { squash: boolean; message?: string }): Promise<LandOutcome> {
    return land(this.herdState, agentId, options);
  }

  /** Merges the user's current branch into an isolated sheep's worktree (there only); conflicts stay there for the sheep. */
  sync(agentId: AgentId): Promise<SyncOutcome> {
    return sync(this.herdState, agentId);
  }

  /** Where an isolated sheep's branch stands (read only; undefined where its machine cannot tell); what the herd spent, closed sheep too. */
  readonly branchState = (agentId: AgentId): Promise<BranchState | undefined> => branchState(this.herdState, agentId);
  readonly usage = (): UsageTotals => this.herdState.usage();
}
