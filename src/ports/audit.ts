/**
 * The audit port: what happened to which sheep, one event at a time. The core reports its events
 * here; the file writer (src/protocol/audit-log.ts) stamps nothing the core did not say, and a
 * sink never throws back into the call that reported.
 */
import type { Usage, WaitStatus } from "../core/types.ts";

export const AUDIT_EVENTS = ["start", "ready", "take", "prompt", "result", "close", "adopt", "prune", "refusal", "failure"] as const;
export type AuditEventName = (typeof AUDIT_EVENTS)[number];

export interface AuditEvent {
  event: AuditEventName;
  /** ISO time of the event. */
  time: string;
  /** The shepherd that did it (`<pid>:<token>`). */
  owner: string;
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
  /** prompt: the message's size; its text stays in the sheep's session, not here. */
  bytes?: number;
  /** result */
  status?: WaitStatus;
  durationMs?: number;
  usage?: Usage;
  /** refusal: "trust" or "not_owned"; failure: the error code. */
  reason?: string;
  /** result/refusal/failure: the error text, shortened. */
  error?: string;
  /** adopt: the shepherd the sheep belonged to. */
  from?: string;
  /** close: prompts cancelled by it. */
  cancelledPromptIds?: string[];
  /** start/ready/close: a sheep of the warm pool (take: the start it served). */
  warm?: true;
}

export type AuditInput = Omit<AuditEvent, "time" | "owner">;

export interface AuditSink {
  record(event: AuditEvent): void;
}

/** The event as a sink records it: stamped with its time and the shepherd that did it. */
export function stamped(event: AuditInput, owner: string, now: number): AuditEvent {
  return { time: new Date(now).toISOString(), owner, ...event };
}
