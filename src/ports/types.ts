/**
 * The shapes the ports take and return, owned here so the ports import nothing of the core: a
 * sheep's record, its prompts and their results, its messages, conversation, definition and card,
 * and the calls of the core built on them.
 */
import type { Direction, Placement, RuntimeName } from "./runtime.ts";
import type { Baseline, Diffstat, Worktree } from "./workspace.ts";
import type { AgentId, PromptId } from "../domain/ids.ts";
import type { Budget, Spend } from "../domain/budget.ts";

export type AgentState = "starting" | "idle" | "working" | "blocked" | "exited" | "closed";
export type WaitStatus = "completed" | "failed" | "timeout" | "cancelled" | "blocked";
/** How a prompt reaches a sheep that is still working: into its running turn, or queued behind it. */
export type DeliverAs = "steer" | "followUp";
export type MessageKind = "progress" | "question" | "done";

/**
 * Where an action came from: the model's `shepherd` tool, a person's `/shepherd`, the panel's
 * page (its session cookie), the HTTP API (its Bearer token), or the shepherd itself (adopting,
 * the warm pool, the courier). One notion for the audit log and for whom an answer is owed to.
 */
export type Edge = "tool" | "command" | "panel" | "api" | "shepherd";
export const EDGES: readonly Edge[] = ["tool", "command", "panel", "api", "shepherd"];

/** Edges where a person (or a person's script) acts: what they asked is answered to them, not to the model. */
export function personEdge(edge: Edge | undefined): boolean {
  return edge === "command" || edge === "panel" || edge === "api";
}

/** What a definition contributes to a sheep; resolved (and trusted) before the core sees it. */
export interface AgentDefinition {
  name: string;
  description: string;
  source: "user" | "project" | "bundled";
  path: string;
  tools?: string[];
  model?: string;
  thinking?: string;
  /** Appended to the sheep's system prompt. */
  systemPrompt?: string;
  /** `isolation: worktree` in the front matter: the sheep gets a worktree of its own unless the call says otherwise. */
  isolation?: "worktree";
  /** `host:` in a user's agent file: the machine its sheep run on unless the call names one. */
  host?: string;
  /** `sandbox: true` (any file) asks for bubblewrap; `false` (a user's file only) asks for none, refused where the user's default is on. */
  sandbox?: boolean;
  /** `budget:` in the front matter: the most its sheep may spend; any file may set one, and the tightest of all given holds. */
  budget?: Budget;
}

export interface Usage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  totalTokens?: number;
  cost?: number;
}

export interface AgentRecord {
  agentId: AgentId;
  agent: string;
  label: string;
  runtime: RuntimeName;
  /** The machine the sheep runs on: a name of the `hosts` setting; absent on this machine. */
  host?: string;
  /** Unique across hosts: a remote sheep's pane id is `<host>/<the multiplexer's id there>`. */
  paneId: string;
  /** A path on the sheep's host. */
  cwd: string;
  model?: string;
  sessionPath: string;
  createdAt: string;
  /** The shepherd that created the pane; only it may close it. */
  owner: string;
  state: AgentState;
  /** When `state` last changed (ISO time); absent on records written before it was kept. */
  stateSince?: string;
  activePromptId?: PromptId;
  /** Follow-up prompts queued behind the active one, oldest first; the sheep answers them in order. */
  queue?: PromptId[];
  attachHint?: string;
  /** How many of the sheep's messages a `messages` call has shown: those before it are read. */
  messagesRead?: number;
  /** How many of the sheep's messages were handled (told to the person, questions pushed). */
  messagesHandled?: number;
  /** An isolated sheep's own checkout; kept after close unless removed. */
  worktree?: Worktree;
  /** The sheep whose conversation (session file) this one continues. */
  resumedFrom?: string;
  /** A sheep of the warm pool: ready, never prompted, in no view until a start takes it. */
  warm?: true;
  /** It came back to the pool after a task (a fresh conversation in the same pi): its earlier files are kept when it closes. */
  renewed?: true;
  /** Its pi runs in bubblewrap (src/sandbox). */
  sandboxed?: true;
  /** The budget it is held to (its own, or its share of the day's; spec: Budgets), told to the sheep with each prompt. */
  budget?: Budget;
  /** What it spent since it started, as the sheep last reported (kept after close: the day counts it). */
  spent?: Spend;
  /** Its entry in the day's spend ledger (its reservation's id), and the day it was last reported in with what earlier days counted of it. */
  ledgerKey?: string;
  ledgerDay?: string;
  ledgerBase?: Spend;
  /** The warning event of its budget went out. */
  budgetWarned?: true;
}

/** A sheep's budget as reserved before its start: what it is held to, and its entry in the day's ledger. */
export interface HeldBudget {
  key: string;
  budget?: Budget;
}

export interface PromptRecord {
  promptId: PromptId;
  agentId: AgentId;
  submittedAt: string;
  /** Set once, never replaced: a prompt settles exactly once. */
  settled?: WaitItem;
  /** Push the final result into the shepherd's conversation unless a wait returned it first. */
  notify?: true;
  /** Chosen by the caller: the same requestId to the same sheep is this prompt again. */
  requestId?: string;
  /** Set once: the final result reached the conversation, by a wait or by a push. */
  delivered?: { by: "wait" | "push"; at: string };
  /** Steering messages sent into this prompt's turn. */
  steerIds?: string[];
  /** A background delegation this prompt belongs to: its result travels with the delegation's. */
  delegationId?: string;
  /** The sheep's working tree when the prompt was submitted, for evidence. */
  baseline?: Baseline;
  /** Why no baseline could be taken in a git working tree. */
  evidenceError?: string;
  /** The first line of the message (at most FIRST_LINE_CHARS): what the sheep works on, for live views. */
  firstLine?: string;
  /**
   * When the sheep took it: its result's word once answered; before that, when it became the active
   * prompt. Absent while queued; a prompt that was never queued started when it was submitted.
   */
  startedAt?: string;
  /** When the sheep answered it (its result's word). */
  finishedAt?: string;
  /** Where it was sent from: a person's prompt (personEdge) is answered to the person, not to the model. */
  edge?: Edge;
  /** Set once: the answer was shown to someone outside the conversation's push (a person's wait, a read, the panel). */
  shown?: { edge: Edge; at: string };
  /** A person's prompt that finished while nobody waited: its finish was told in the transcript. */
  announced?: true;
}

/** What changed in the sheep's working tree during one prompt. */
export interface Evidence extends Diffstat {
  /** The sheep works in the user's checkout: the diff can hold edits anyone made there meanwhile. */
  shared: boolean;
}

export interface WaitItem {
  promptId: string;
  agentId: string;
  status: WaitStatus;
  text?: string;
  error?: string;
  stopReason?: string;
  usage?: Usage;
  model?: string;
  sessionPath?: string;
  durationMs?: number;
  evidence?: Evidence;
  /** Evidence was due (a git working tree) but could not be made: why. */
  evidenceError?: string;
  /** Steering messages that reached the turn, and those that came after it had ended. */
  steered?: number;
  steersMissed?: number;
  /** With status blocked: the question the sheep asked and waits to have answered (action reply). */
  question?: { messageId: string; text: string };
  /** What the sheep spent since it started, as of this result, and the budget it is held to. */
  spent?: Spend;
  budget?: Budget;
}

/** One line of a sheep's message log (`shepherd_message` in the sheep). */
export interface SheepMessage {
  messageId: string;
  kind: MessageKind;
  text: string;
  at: string;
  /** A question whose tool call waits for `reply` (until its timeout). */
  awaitReply?: boolean;
  timeoutSec?: number;
  /** The prompt the sheep was working on when it wrote this. */
  promptId?: string;
}

export interface StartRequest {
  definition: AgentDefinition;
  label?: string;
  placement?: Placement;
  direction?: Direction;
  /** A name of the `hosts` setting; absent: this machine. */
  host?: string;
  /** A path on that host. */
  cwd: string;
  model?: string;
  /** Told the sheep's id and label the moment its record exists, before it is ready. */
  onRecorded?: (agentId: AgentId, label: string) => void;
  /** A worktree of the cwd's repository on a branch of its own. */
  isolate?: boolean;
  /** With isolate: the worktree starts from this one's work (a chain's step before), not from HEAD. */
  isolateFrom?: Worktree;
  /** Continue this earlier sheep's conversation: pi runs on its kept session file. */
  resume?: ResumeCard;
  /** Run it in bubblewrap (the edge decided: the user's default, or a request that turned it on). */
  sandbox?: true;
  /** Reserved before the start (Shepherd.reserve); let go again if the start fails. */
  budget?: HeldBudget;
  /**
   * The sheep's first prompt, in its inbox before pi starts (a cold start), so pi takes it the
   * moment it is ready; a warm sheep gets it as it is handed over. StartedAgent.promptId names it.
   */
  prompt?: { text: string; delegationId?: string };
}

/**
 * What a sheep leaves behind so that it can be resumed once closed: who it was and where its
 * conversation is. Written when it starts, kept with its session file.
 */
export interface ResumeCard {
  agentId: string;
  agent: string;
  label: string;
  /** Absent: this machine. A remote sheep resumes on its own host (its session file is there). */
  host?: string;
  cwd: string;
  model?: string;
  sessionPath: string;
  createdAt: string;
  resumedFrom?: string;
  /** The definition exactly as the sheep ran with it (its model already resolved). */
  definition: AgentDefinition;
}

/** What start returns: the record without what only the shepherd itself tracks. */
export type StartedAgent = Omit<AgentRecord, "owner" | "state" | "activePromptId"> & {
  /** The prompt the start was given (StartRequest.prompt). */
  promptId?: PromptId;
};

export interface SubmittedPrompt {
  promptId: PromptId;
  agentId: string;
  submittedAt: string;
  notify?: true;
  /** Present when it applied: the sheep was working, so the message steered or queued. */
  deliverAs?: DeliverAs;
  /** followUp: the prompts ahead of this one (the active one first). */
  queuedBehind?: string[];
  /** steer: the id of this steering message; promptId is the prompt it steers. */
  steerId?: string;
  /** The requestId was seen before: this is the original handle and nothing was sent again. */
  duplicate?: true;
  requestId?: string;
}

export interface PromptOptions {
  notify?: boolean;
  deliverAs?: DeliverAs;
  requestId?: string;
  /** Internal: the background delegation this prompt is a task of. */
  delegationId?: string;
}

export interface AgentStatus {
  agentId: string;
  agent: string;
  label: string;
  runtime: RuntimeName;
  host?: string;
  state: AgentState;
  activePromptId?: string;
  /** Follow-up prompts queued behind the active one, in the order the sheep will answer them. */
  queued?: string[];
  paneAlive: boolean;
  runtimeStatus?: string;
  createdAt: string;
  worktree?: Worktree;
  /** Its pi runs in bubblewrap. */
  sandboxed?: true;
  spent?: Spend;
  budget?: Budget;
}

export interface CloseOptions {
  /** Also remove the sheep's worktree and branch. */
  removeWorktree?: boolean;
  /** Remove them even with changes that were never landed. */
  force?: boolean;
}

/**
 * A sheep as every live view shows it (the widget, wait and delegate progress): its state and
 * since when that state's clock runs. One source, so no two views disagree on either.
 */
export interface SheepView {
  agentId: string;
  agent: string;
  label: string;
  host?: string;
  state: AgentState;
  /** starting: since the sheep was recorded; working: since its prompt was submitted; no clock otherwise. */
  since?: string;
  /** What it spent since it started, and its budget (spec: Budgets). */
  spent?: Spend;
  budget?: Budget;
}

/** One line of a sheep's conversation as `read` shows it: a prompt it got, an answer, a tool call. */
export interface ConversationLine {
  kind: "prompt" | "answer" | "tool" | "error";
  text: string;
  /** A tool call whose result was an error. */
  failed?: boolean;
}

/** A prompt and what the sheep did with it. */
export interface ConversationTurn {
  at?: string;
  lines: ConversationLine[];
  /** Its start (the prompt, perhaps more) is earlier in the session file than what was read. */
  cut?: true;
}

/** The last turns of a sheep's conversation, from its session file. */
export interface Conversation {
  sessionPath: string;
  /** Undefined when the session file does not exist (yet). */
  turns?: ConversationTurn[];
  /** Turns before these exist. */
  earlier: boolean;
}

export interface CloseOutcome {
  agentId: string;
  cancelledPromptIds: string[];
  alreadyClosed: boolean;
  /** Where the sheep's session file is kept; absent when it wrote none. */
  sessionPath?: string;
  /** The machine that path is on, where it is not this one. */
  host?: string;
  /** An isolated sheep's worktree after the close: kept (the default) or removed. */
  worktree?: { path: string; branch: string; removed: boolean };
}

export type DelegateMode = "single" | "parallel" | "chain";

/** One task of a background delegation as recorded: enough to report it after a reload or crash. */
export interface DelegationItemRecord {
  agent: string;
  task: string;
  agentId?: string;
  promptId?: string;
  /** The outcome, copied when it is final (its prompt may be long forgotten by delivery time). */
  status?: WaitStatus;
  text?: string;
  error?: string;
  usage?: Usage;
  step?: number;
  evidence?: Evidence;
  evidenceError?: string;
  worktree?: Worktree;
}

/** A background delegation: its results go into the conversation in one message once all are final. */
export interface DelegationRecord {
  delegationId: string;
  owner: string;
  mode: DelegateMode;
  keepOpen: boolean;
  createdAt: string;
  items: DelegationItemRecord[];
  /** No task will start any more: what is listed is all there is to report. */
  done?: true;
  delivered?: { at: string };
  /**
   * Each task's reservation of the day's budget (by its index in items), kept while tasks may still
   * start: a shepherd that dies before they did leaves them to the next, which lets go of those
   * whose task it reports cancelled (spec: Budgets). Never part of what is delivered.
   */
  reservations?: DelegationReservation[];
}

/** A delegation task's reservation: what HeldBudget holds, and which task it is for. */
export interface DelegationReservation {
  item: number;
  key: string;
  budget: Budget;
}

/** One attempt of a sandboxed sheep to reach the network, as its egress log holds it (checked where it is read). */
export interface EgressAttempt {
  /** ISO time the attempt began. */
  time: string;
  /** `host:port` as the sheep asked for it. */
  target: string;
  /** CONNECT (a tunnel) or the HTTP method of a forwarded request. */
  method: string;
  verdict: "allowed" | "refused";
  /** Why it was refused; or, allowed, why it ended early (connect_failed). */
  reason?: string;
  /** The address the proxy connected to (allowed only). */
  address?: string;
  /** Bytes from the sheep to the destination, and back. */
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

/**
 * What a sandboxed sheep tried to reach, from its egress log: counts of every entry the log holds
 * (the current file and the one rotated before it; older ones are dropped), and its last entries.
 */
export interface EgressReport {
  allowed: number;
  refused: number;
  bytesUp: number;
  bytesDown: number;
  /** The time of the oldest entry counted: the counts are since then. */
  since?: string;
  /** The last entries, oldest first. */
  entries: EgressAttempt[];
  /** Lines of the log that are no entry (damage, or written by the sheep itself): left out of counts and entries. */
  skipped: number;
}
