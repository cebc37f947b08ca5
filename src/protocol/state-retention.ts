// The same bounds the core keeps in memory: the file never holds less than a shepherd may ask for.
import { MAX_CLOSED_KEPT as MAX_CLOSED_AGENTS, MAX_SETTLED_KEPT as MAX_SETTLED_PER_AGENT } from "../core/herd.js";
import type { AgentRecord, PromptRecord } from "../core/types.js";

/**
 * Results are kept exact (never truncated), so state.json is bounded by counts instead: every
 * live sheep, at most MAX_CLOSED_AGENTS closed ones, and per sheep its unsettled prompt plus at
 * most MAX_SETTLED_PER_AGENT settled ones. The file stays under about
 * (live sheep + MAX_CLOSED_AGENTS) x (MAX_SETTLED_PER_AGENT + 1) x the largest final answer.
 */

const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

export function withinBounds(agents: readonly AgentRecord[], prompts: readonly PromptRecord[]): { agents: AgentRecord[]; prompts: PromptRecord[] } {
  // Across every owner: a closed sheep's record only answers late questions about it, the newest matter most.
  // A closed sheep that kept its worktree leads to work not yet landed: kept like a live one.
  const closed = agents.filter((a) => a.state === "closed" && !a.worktree).sort((a, b) => newestFirst(a.createdAt, b.createdAt));
  const dropped = new Set(closed.slice(MAX_CLOSED_AGENTS).map((a) => a.agentId));
  const keptAgents = agents.filter((a) => !dropped.has(a.agentId));
  const kept = new Set(keptAgents.map((a) => a.agentId));
  const active = new Set(keptAgents.flatMap((a) => (a.activePromptId ? [a.activePromptId] : [])));
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
  return {
    agents: keptAgents,
    // Unsettled prompts are at most one per sheep (one pending prompt per sheep), so they need no cap.
    prompts: prompts.filter((p) => kept.has(p.agentId) && (!p.settled || active.has(p.promptId) || keptSettled.has(p.promptId))),
  };
}
