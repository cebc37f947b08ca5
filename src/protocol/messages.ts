/** The file formats that travel between the shepherd and a sheep. */
import type { Budget, Spend } from "../domain/budget.ts";
import type { SheepResult } from "../ports/sheep-files.ts";

/** A prompt of its own: the sheep submits it once nothing else of ours runs. */
export interface InboxPrompt {
  kind?: "prompt";
  promptId: string;
  text: string;
  submittedAt: string;
  /** The budget the sheep is held to from this prompt on (spec: Budgets); none: no limit. */
  budget?: Budget;
}

/** A steering message into the turn of `target`, if that turn still runs when the sheep reads it. */
export interface InboxSteer {
  kind: "steer";
  steerId: string;
  target: string;
  text: string;
  submittedAt: string;
}

/** Abort the running turn of `target` (pi's own abort, as Escape in its editor), if that turn still runs. */
export interface InboxInterrupt {
  kind: "interrupt";
  interruptId: string;
  target: string;
  submittedAt: string;
}

/**
 * A fresh conversation in the same pi (its own new-session path), once nothing of ours runs: the
 * sheep answers in outbox/<renewId>.json, completed with its new session file, or failed.
 */
export interface InboxRenew {
  kind: "renew";
  renewId: string;
  submittedAt: string;
}

export type InboxItem = InboxPrompt | InboxSteer | InboxInterrupt | InboxRenew;

export interface StatusReport {
  pid: number;
  readyAt: string;
  sessionPath?: string;
  piVersion?: string;
  /** The pi program this sheep runs (its CLI script), for doctor and for tests of older pi. */
  piCli?: string;
  state: "idle" | "working";
  activePromptId?: string;
  /** Present while the sheep waits on a question or approval. */
  blocked?: string;
  /** Present while the sheep's shepherd_message call waits for the shepherd's reply. */
  asking?: { messageId: string; text: string };
  /** What the sheep spent since it started (every model response), and the budget it holds. */
  spent?: Spend;
  budget?: Budget;
  updatedAt: string;
}

export interface ExitReport {
  code: number | null;
  signal: string | null;
  at: string;
}

/** What a sheep writes to its outbox: exactly what the core reads as a result. */
export type ResultFile = SheepResult;

/** `replies/<messageId>.json`: the shepherd's answer, or the sheep's note that it stopped waiting. */
export type ReplyFile = { messageId: string; text: string; at: string } | { messageId: string; expired: true; at: string };

export interface LaunchSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}
