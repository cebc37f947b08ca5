/**
 * The sheep side of the protocol as the core sees it: a private place per sheep where the launch
 * spec, prompts, results and the sheep's own reports live. The file implementation is
 * src/protocol; unit tests use an in-memory one.
 */
import type { AgentDefinition, Conversation, EgressReport, ResumeCard, SheepMessage, Usage } from "./types.ts";
import type { ExitStatus, PaneCommand } from "./runtime.ts";
import type { Budget, Spend } from "../domain/budget.ts";

export interface PrepareRequest {
  agentId: string;
  definition: AgentDefinition;
  cwd: string;
  model?: string;
  label: string;
  createdAt: string;
  /** The machine it runs on (a name of the `hosts` setting); absent: this machine. */
  host?: string;
  /** A resumed sheep: pi runs on this earlier sheep's session file. */
  resume?: { from: string; sessionPath: string };
  /** Run it in bubblewrap (src/sandbox); a host whose user's setting says "on" sandboxes it without being asked. */
  sandbox?: true;
}

/** The card a host keeps for a sheep it prepared: who it is and which session it runs on. */
export function resumeCardOf(req: PrepareRequest, sessionPath: string): ResumeCard {
  const model = req.model ?? req.definition.model;
  return {
    agentId: req.agentId,
    agent: req.definition.name,
    label: req.label,
    ...(req.host !== undefined ? { host: req.host } : {}),
    cwd: req.cwd,
    ...(model !== undefined ? { model } : {}),
    sessionPath,
    createdAt: req.createdAt,
    ...(req.resume ? { resumedFrom: req.resume.from } : {}),
    // As the sheep runs it: a resumed sheep must reach the same model, alias or not.
    definition: { ...req.definition, ...(model !== undefined ? { model } : {}) },
  };
}

export interface PreparedSheep {
  sessionPath: string;
  /** The launcher, as the pane runs it: absolute paths chosen by the package, nothing from the user. */
  command: PaneCommand;
  /** It runs in bubblewrap. */
  sandboxed?: true;
}

export interface SheepSnapshot {
  ready?: { pid: number; readyAt: string; sessionPath?: string };
  /**
   * How pi ended, from the sheep's exit report; or, `inferred`, only that the pid it reported has
   * been gone for a while (code and signal null): then a multiplexer that saw the end knows better.
   */
  exited?: ExitStatus & { at: string; inferred?: true };
  /** The pid the sheep reported is not running now; how it ended is for `exited` or the multiplexer to say. */
  piGone?: true;
  /** Label of the question or approval the sheep waits on, when it does. */
  blocked?: string;
  /** The question to the shepherd whose reply the sheep waits for, when it does. */
  asking?: { messageId: string; text: string };
  /** What the sheep spent since it started, as of its last report (every model response; spec: Budgets). */
  spent?: Spend;
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
  /** What the sheep spent since it started, as of this result (every model response summed). */
  spent?: Spend;
  /** The turn was stopped because the sheep's budget was spent (errorMessage has the numbers). */
  budgetExceeded?: true;
  /**
   * Set by the host, never taken from the sheep's file: the result file is there but was not read
   * (past its bound, or not a regular file). The prompt settles failed with this code and reason.
   */
  refused?: { code: "result_too_large" | "result_unreadable"; reason: string };
}

/** What goes into a sheep's inbox: a prompt of its own, a steer into the turn of `target`, the abort of that turn, or a renewal. */
export type Delivery =
  | { kind: "prompt"; promptId: string; text: string; budget?: Budget }
  | { kind: "steer"; steerId: string; target: string; text: string }
  | { kind: "interrupt"; interruptId: string; target: string }
  /** A fresh conversation in the same pi: the sheep answers in the result of `renewId` (its sessionPath the new session's). */
  | { kind: "renew"; renewId: string };

/** How a reply reached the sheep's waiting question, or why it did not. */
export type ReplyOutcome = "delivered" | "already_replied" | "expired";

/**
 * How long a start may hold a launch spec before its pane's launcher reads (and removes) it: far
 * longer than a start's deadlines, so a spec older than this that no record knows is a start cut short.
 */
export const STALE_SPEC_MS = 10 * 60_000;

export interface SheepFiles {
  prepare(req: PrepareRequest): Promise<PreparedSheep>;
  /**
   * Sheep whose launch spec (it holds forwarded secrets) no launcher has read for `olderThanMs`,
   * each with the host it is on (none: this machine). Which of them no record knows is the
   * caller's to tell; `discard` removes one.
   */
  staleSpecs?(olderThanMs: number): Promise<{ agentId: string; host?: string }[]>;
  snapshot(agentId: string): Promise<SheepSnapshot>;
  /**
   * Whether the pid the sheep last reported (as of the last snapshot) still runs: a system call,
   * no file read. Undefined while no pid is known. A host without it leaves liveness to the
   * multiplexer alone.
   */
  running?(agentId: string): boolean | undefined;
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
  /** The reply a question got, as written (none for one unanswered, expired, or not readable). */
  replyText?(agentId: string, messageId: string): Promise<string | undefined>;
  /** Answers a question the sheep waits on; exactly one reply (or its expiry) ever counts. */
  reply(agentId: string, messageId: string, text: string): Promise<ReplyOutcome>;
  /** Calls onChange whenever anything the sheep reports may have changed. */
  subscribe(agentId: string, onChange: () => void): () => void;
  /** A private file for the patch of a prompt's evidence (its directory made); kept after close. */
  evidencePath(agentId: string, promptId: string): Promise<string>;
  /**
   * Removes the sheep's private files except its session file, its evidence and the card to resume
   * it by; returns the session file's path if the sheep wrote one.
   */
  cleanup(agentId: string): Promise<string | undefined>;
  /**
   * A sheep that renewed (a fresh conversation in the same pi) runs on a new session file, which
   * its card names from now on; the path the sheep reported is taken only inside its own
   * directory. Returns the path the card names, undefined when it was refused.
   */
  renewed?(agentId: string, sessionPath: string): Promise<string | undefined>;
  /** The resident memory of the pi the sheep last reported (kB), where the host can read it; the warm pool's budget counts it. */
  residentKb?(agentId: string): Promise<number | undefined>;
  /** The sheep's card follows its new label (a warm sheep taken by a start). */
  relabel?(agentId: string, label: string): Promise<void>;
  /** Removes every file of a sheep that never had a prompt (a warm one): nothing of it is worth keeping. */
  discard(agentId: string): Promise<void>;
  /** The card of a sheep whose conversation is kept; undefined when none is (or it is not well-formed). */
  resumeCard(agentId: string): Promise<ResumeCard | undefined>;
  /** Every such card, any shepherd's, oldest first. */
  resumeCards(): Promise<ResumeCard[]>;
  /** The last turns of the sheep's conversation, from its session file (kept after close). */
  conversation(agentId: string, turns: number): Promise<Conversation>;
  /**
   * What a sandboxed sheep tried to reach: counts of its egress log and its last `entries` entries
   * (kept after close); undefined where it has no log. A host without it has no sandboxed sheep.
   */
  egress?(agentId: string, entries: number): Promise<EgressReport | undefined>;
}
