import type { Direction, Placement, RuntimeName } from "../ports/runtime.js";

export type AgentState = "starting" | "idle" | "working" | "blocked" | "exited" | "closed";
export type WaitStatus = "completed" | "failed" | "timeout" | "cancelled" | "blocked";

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
  agentId: string;
  agent: string;
  label: string;
  runtime: RuntimeName;
  paneId: string;
  cwd: string;
  model?: string;
  sessionPath: string;
  createdAt: string;
  /** The shepherd that created the pane; only it may close it. */
  owner: string;
  state: AgentState;
  activePromptId?: string;
  attachHint?: string;
  /** The sheep whose conversation (session file) this one continues. */
  resumedFrom?: string;
}

export interface PromptRecord {
  promptId: string;
  agentId: string;
  submittedAt: string;
  /** Set once, never replaced: a prompt settles exactly once. */
  settled?: WaitItem;
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
}

export interface StartRequest {
  definition: AgentDefinition;
  label?: string;
  placement?: Placement;
  direction?: Direction;
  cwd: string;
  model?: string;
  /** Told the sheep's id and label the moment its record exists, before it is ready. */
  onRecorded?: (agentId: string, label: string) => void;
  /** Continue this earlier sheep's conversation: pi runs on its kept session file. */
  resume?: ResumeCard;
}

/**
 * What a sheep leaves behind so that it can be resumed once closed: who it was and where its
 * conversation is. Written when it starts, kept with its session file.
 */
export interface ResumeCard {
  agentId: string;
  agent: string;
  label: string;
  cwd: string;
  model?: string;
  sessionPath: string;
  createdAt: string;
  resumedFrom?: string;
  /** The definition exactly as the sheep ran with it (its model already resolved). */
  definition: AgentDefinition;
}

/** What start returns: the record without what only the shepherd itself tracks. */
export type StartedAgent = Omit<AgentRecord, "owner" | "state" | "activePromptId">;

export interface SubmittedPrompt {
  promptId: string;
  agentId: string;
  submittedAt: string;
}

export interface AgentStatus {
  agentId: string;
  agent: string;
  label: string;
  runtime: RuntimeName;
  state: AgentState;
  activePromptId?: string;
  paneAlive: boolean;
  runtimeStatus?: string;
  createdAt: string;
}

/**
 * A sheep as every live view shows it (the widget, wait and delegate progress): its state and
 * since when that state's clock runs. One source, so no two views disagree on either.
 */
export interface SheepView {
  agentId: string;
  agent: string;
  label: string;
  state: AgentState;
  /** starting: since the sheep was recorded; working: since its prompt was submitted; no clock otherwise. */
  since?: string;
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
}
