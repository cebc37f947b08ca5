/**
 * The audit port: what happened to which sheep, one event at a time. The core reports its events
 * here; the file writer (src/stores/audit-log.ts) stamps nothing the core did not say, and a
 * sink never throws back into the call that reported.
 */
import type { Budget, DailyBudgets, Reservation, Spend } from "../domain/budget.ts";
import type { DayTotals } from "../domain/budget-day.ts";
import type { Edge, Usage, WaitStatus } from "./types.ts";

/**
 * Every action that changes the user's checkout, branch or a sheep is an event: a new one adds its
 * name here, tells `Herd.audit` where it happened, and runs inside `Herd.audited` so a refusal or
 * failure is told with the sheep it concerned.
 */
export const AUDIT_EVENTS = [
  "start",
  "ready",
  "take",
  "renew",
  "prompt",
  "steer",
  "interrupt",
  "reply",
  "result",
  "land",
  "sync",
  "close",
  "adopt",
  "prune",
  "refusal",
  "failure",
  /** A sheep's spend, or the day's, reached the warning line (`budgets.warnAt`) of its limit; once each. */
  "budget-warning",
  /** A sheep's turn was stopped at its budget, a start was refused for the day's, or the day's is spent (spec: Budgets). */
  "budget-exceeded",
] as const;
export type AuditEventName = (typeof AUDIT_EVENTS)[number];

export interface AuditEvent {
  event: AuditEventName;
  /** ISO time of the event. */
  time: string;
  /** The shepherd that did it (`<pid>:<token>`). */
  owner: string;
  /**
   * Where it came from: the model's tool, a person's /shepherd, the panel's page, the API (its
   * token), or the shepherd itself. A result names the edge its prompt came from.
   */
  edge?: Edge;
  /** The sheep's machine (a name of the `hosts` setting), where it is not this one. */
  host?: string;
  agentId?: string;
  promptId?: string;
  label?: string;
  /** start: the agent definition; refusal/failure: the action that was refused or failed. */
  agent?: string;
  action?: string;
  runtime?: string;
  paneId?: string;
  cwd?: string;
  model?: string;
  /** start: the sheep whose conversation this one continues. */
  resumedFrom?: string;
  /** start: its pi runs in bubblewrap. */
  sandboxed?: true;
  /** prompt/steer/reply: the message's size; its text stays in the sheep's session, not here. */
  bytes?: number;
  /** steer: the steering message (promptId is the prompt it steers). */
  steerId?: string;
  /** reply: the question answered. */
  messageId?: string;
  /** land: the sheep's branch, the user's branch that received it, the new commit, and what came in; sync: the sheep's branch, the user's commit merged into it, and what came in. */
  branch?: string;
  into?: string;
  commit?: string;
  squash?: boolean;
  /** land: false when the user's branch held everything already (nothing changed). */
  landed?: boolean;
  fileCount?: number;
  /** result */
  status?: WaitStatus;
  durationMs?: number;
  usage?: Usage;
  /** refusal: "trust", or the error code of a refusal (`not_owned`, `land_refused`, `reply_refused`); failure: the error code. */
  reason?: string;
  /** result/refusal/failure: the error text, shortened. */
  error?: string;
  /** refusal of action "egress": the `host:port` a sandboxed sheep tried to reach (reason: why its egress proxy refused). */
  target?: string;
  /** adopt: the shepherd the sheep belonged to. */
  from?: string;
  /** close, and prune of a pane whose pi exited: prompts cancelled by it. */
  cancelledPromptIds?: string[];
  /** start/ready/close: a sheep of the warm pool (take: the start it served). */
  warm?: true;
  /** budget-warning/budget-exceeded: a sheep's own budget, or the herd's day (every shepherd of the user). */
  scope?: "sheep" | "day";
  /** budget-*: the limits (a sheep's budget, or the day's `dailyTokens`/`dailyCostUsd`) and what was spent (or reserved) against them. */
  budget?: Budget | DailyBudgets;
  spent?: Spend | DayTotals;
  /** budget-exceeded of a refused start: what it would have reserved. */
  reserved?: Reservation;
}

export type AuditInput = Omit<AuditEvent, "time" | "owner">;

export interface AuditSink {
  record(event: AuditEvent): void;
}

/** The event as a sink records it: stamped with its time and the shepherd that did it. */
export function stamped(event: AuditInput, owner: string, now: number): AuditEvent {
  return { time: new Date(now).toISOString(), owner, ...event };
}

/** Error codes told as a refusal (the action was not allowed), with the reason they are told by; any other is a failure. */
const REFUSALS: Readonly<Record<string, string>> = {
  project_agent_refused: "trust",
  not_owned: "not_owned",
  land_refused: "land_refused",
  reply_refused: "reply_refused",
  budget_exceeded: "budget_exceeded",
};

/** A refused or failed action as an event: refusal with its reason, or failure with the error code. */
export function notDone(action: string, code: string, error: string): AuditInput {
  const refusal = REFUSALS[code];
  return { event: refusal ? "refusal" : "failure", action, reason: refusal ?? code, error };
}

/** Errors already told (by the core, which knew the sheep): the entry does not tell them again. */
const told = new WeakSet<object>();

export function markTold(e: unknown): void {
  if (typeof e === "object" && e !== null) told.add(e);
}

export function wasTold(e: unknown): boolean {
  return typeof e === "object" && e !== null && told.has(e);
}
