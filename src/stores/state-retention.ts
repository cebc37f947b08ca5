// The same bounds the core keeps in memory: the file never holds less than a shepherd may ask for.
import {
  MAX_CLOSED_KEPT as MAX_CLOSED_AGENTS,
  MAX_DELIVERED_DELEGATIONS_KEPT,
  MAX_QUEUED,
  MAX_SETTLED_KEPT as MAX_SETTLED_PER_AGENT,
} from "../domain/bounds.ts";
import type { AgentRecord, DelegationRecord, PromptRecord } from "../ports/types.ts";

/**
 * Records are bounded by counts here (their texts in bytes by state-texts.ts): every
 * live sheep, at most MAX_CLOSED_AGENTS closed ones, and per sheep its unsettled prompts (the
 * active one and at most MAX_QUEUED follow-ups), the settled ones still owed to the conversation
 * (a push or a delegation not yet delivered) and at most MAX_SETTLED_PER_AGENT other settled
 * ones; every undelivered background delegation and the MAX_DELIVERED_DELEGATIONS_KEPT newest
 * delivered ones (which keep no texts).
 */

const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

export function withinBounds(
  agents: readonly AgentRecord[],
  prompts: readonly PromptRecord[],
  delegations: readonly DelegationRecord[] = [],
): { agents: AgentRecord[]; prompts: PromptRecord[]; delegations: DelegationRecord[] } {
  // Across every owner: a closed sheep's record only answers late questions about it, the newest matter most.
  // A closed sheep that kept its worktree leads to work not yet landed: kept like a live one.
  const closed = agents.filter((a) => a.state === "closed" && !a.worktree).sort((a, b) => newestFirst(a.createdAt, b.createdAt));
  const dropped = new Set(closed.slice(MAX_CLOSED_AGENTS).map((a) => a.agentId));
  const keptAgents = agents.filter((a) => !dropped.has(a.agentId));
  const kept = new Set(keptAgents.map((a) => a.agentId));
  const active = new Set(keptAgents.flatMap((a) => [...(a.activePromptId ? [a.activePromptId] : []), ...(a.queue ?? []).slice(0, MAX_QUEUED)]));
  const undelivered = new Set(delegations.filter((d) => !d.delivered).map((d) => d.delegationId));
  const owed = (p: PromptRecord) => (p.notify === true && !p.delivered) || (p.delegationId !== undefined && undelivered.has(p.delegationId));
  for (const p of prompts) if (owed(p)) active.add(p.promptId);
  const settled = new Map<string, PromptRecord[]>();
  for (const p of prompts) {
    if (!kept.has(p.agentId) || !p.settled || active.has(p.promptId)) continue;
    const list = settled.get(p.agentId);
    if (list) list.push(p);
    else settled.set(p.agentId, [p]);
  }
  const keptSettled = new Set<string>();
  for (const list of settled.values()) {
    for (const p of list.sort((a, b) => newestFirst(a.submittedAt, b.submittedAt)).slice(0, MAX_SETTLED_PER_AGENT)) keptSettled.add(p.promptId);
  }
  const delivered = delegations.filter((d) => d.delivered).sort((a, b) => newestFirst(a.createdAt, b.createdAt));
  const keptDelivered = new Set(delivered.slice(0, MAX_DELIVERED_DELEGATIONS_KEPT).map((d) => d.delegationId));
  return {
    agents: keptAgents,
    // Unsettled prompts are bounded per sheep by the queue (one active, MAX_QUEUED follow-ups).
    prompts: prompts.filter((p) => kept.has(p.agentId) && (!p.settled || active.has(p.promptId) || keptSettled.has(p.promptId))),
    delegations: delegations.filter((d) => !d.delivered || keptDelivered.has(d.delegationId)),
  };
}
