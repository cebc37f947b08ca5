/**
 * The sheep side of the protocol as the core sees it: a private place per sheep where the launch
 * spec, prompts, results and the sheep's own reports live. The file implementation is
 * src/protocol; unit tests use an in-memory one.
 */
import type { AgentDefinition, SheepMessage, Usage } from "../core/types.js";

export interface PrepareRequest {
  agentId: string;
  definition: AgentDefinition;
  cwd: string;
  model?: string;
}

export interface PreparedSheep {
  sessionPath: string;
  /** Fixed launcher command: absolute paths chosen by the package, nothing from the user. */
  launcherArgv: string[];
}

export interface SheepSnapshot {
  ready?: { pid: number; readyAt: string; sessionPath?: string };
  exited?: { code: number | null; signal: string | null; at: string };
  /** Label of the question or approval the sheep waits on, when it does. */
  blocked?: string;
  /** The question to the shepherd whose reply the sheep waits for, when it does. */
  asking?: { messageId: string; text: string };
}

export interface SheepResult {
  promptId: string;
  status: "completed" | "failed" | "cancelled";
  text: string;
  stopReason?: string;
  errorMessage?: string;
  usage?: Usage;
  model?: string;
  sessionPath?: string;
  startedAt?: string;
  finishedAt?: string;
  /** Ids of the steering messages that reached this prompt's turn. */
  steered?: string[];
}

/** What goes into a sheep's inbox: a prompt of its own, or a steer into the turn of `target`. */
export type Delivery = { kind: "prompt"; promptId: string; text: string } | { kind: "steer"; steerId: string; target: string; text: string };

/** How a reply reached the sheep's waiting question, or why it did not. */
export type ReplyOutcome = "delivered" | "already_replied" | "expired";

export interface SheepHost {
  prepare(req: PrepareRequest): Promise<PreparedSheep>;
  snapshot(agentId: string): Promise<SheepSnapshot>;
  result(agentId: string, promptId: string): Promise<SheepResult | undefined>;
  /**
   * Delivers a prompt or a steer to the sheep's inbox; returns once it is durably there. The
   * sheep takes deliveries in the order they were made, and each id at most once.
   */
  submit(agentId: string, delivery: Delivery): Promise<void>;
  /** The sheep's messages to its shepherd, oldest first (none when it has written none). */
  messages(agentId: string): Promise<SheepMessage[]>;
  /** Which of the sheep's questions were answered, and which it stopped waiting for. */
  replies(agentId: string): Promise<Map<string, "replied" | "expired">>;
  /** Answers a question the sheep waits on; exactly one reply (or its expiry) ever counts. */
  reply(agentId: string, messageId: string, text: string): Promise<ReplyOutcome>;
  /** Calls onChange whenever anything the sheep reports may have changed. */
  subscribe(agentId: string, onChange: () => void): () => void;
  /** Removes the sheep's private files except its session file. */
  cleanup(agentId: string): Promise<void>;
}
