/**
 * A sandboxed sheep's egress refusal on a host, pushed by the agent there for this machine's audit
 * log. The agent and its sheep's host are not trusted with this log's shape: every field is checked
 * and bounded on arrival, and a line that is no such event is dropped.
 */
import { isWellFormedId } from "../../domain/ids.ts";
import { printable } from "../../domain/printable.ts";

export interface EgressRefusalEvent {
  ev: "egress-refusal";
  agentId: string;
  /** The `host:port` it tried to reach (the proxy there cuts it at 300 characters). */
  target: string;
  /** Why the proxy there refused it (a word: not_allowed, loopback, …). */
  reason: string;
  /** How many refusals before it were told to the egress log there only. */
  error?: string;
}

const MAX_TARGET_CHARS = 300;
const MAX_ERROR_CHARS = 200;
const REASON = /^[a-z][a-z0-9_]{0,39}$/;

/** The event a line carries, checked; undefined when it is none. */
export function egressRefusalOf(m: Record<string, unknown>): EgressRefusalEvent | undefined {
  const { agentId, target, reason, error } = m;
  if (typeof agentId !== "string" || !isWellFormedId(agentId, "agent")) return undefined;
  if (typeof target !== "string" || target.length === 0 || target.length > MAX_TARGET_CHARS) return undefined;
  if (typeof reason !== "string" || !REASON.test(reason)) return undefined;
  if (error !== undefined && (typeof error !== "string" || error.length > MAX_ERROR_CHARS)) return undefined;
  return {
    ev: "egress-refusal",
    agentId,
    target: printable(target),
    reason,
    ...(typeof error === "string" ? { error: printable(error) } : {}),
  };
}
