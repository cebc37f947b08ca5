import type { Direction, Placement, RuntimeName } from "../ports/runtime.js";
import type { Baseline, Diffstat, Worktree } from "../ports/workspace.js";

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
  /** `isolation: worktree` in the front matter: the sheep gets a worktree of its own unless the call says otherwise. */
  isolation?: "worktree";
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
  /** An isolated sheep's own checkout; kept after close unless removed. */
  worktree?: Worktree;
  /** The sheep whose conversation (session file) this one continues. */
  resumedFrom?: string;
}

export interface PromptRecord {
  promptId: string;
  agentId: string;
  submittedAt: string;
  /** Set once, never replaced: a prompt settles exactly once. */
  settled?: WaitItem;
  /** The sheep's working tree when the prompt was submitted, for evidence. */
  baseline?: Baseline;
  /** Why no baseline could be taken in a git working tree. */
  evidenceError?: string;
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
}

export interface StartRequest {
  definition: AgentDefinition;
  label?: string;
  placement?: Placement;
  direction?: Direction;
  cwd: string;
  model?: string;
  /** A worktree of the cwd's repository on a branch of its own. */
  isolate?: boolean;
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
  worktree?: Worktree;
}

export interface CloseOptions {
  /** Also remove the sheep's worktree and branch. */
  removeWorktree?: boolean;
  /** Remove them even with changes that were never landed. */
  force?: boolean;
}

export interface CloseOutcome {
  agentId: string;
  cancelledPromptIds: string[];
  alreadyClosed: boolean;
  /** An isolated sheep's worktree after the close: kept (the default) or removed. */
  worktree?: { path: string; branch: string; removed: boolean };
}
