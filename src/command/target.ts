import type { Registry } from "../core/herd/registry.ts";
import type { ResumeCard } from "../ports/types.ts";
import type { ResumableSheep } from "./complete.ts";

/** Live sheep for completions: label and id of every record that is not closed, and whether it works in a worktree of its own. */
export function liveSheep(registry: Registry): { agentId: string; label: string; agent: string; state: string; isolated: boolean }[] {
  return [...registry.agents.values()]
    .filter((a) => a.state !== "closed")
    .map((a) => ({ agentId: a.agentId, label: a.label, agent: a.agent, state: a.state, isolated: a.worktree !== undefined }));
}

/**
 * Cards of sheep that can be resumed now: none whose sheep, or whose conversation, runs in this
 * shepherd. Each with its age and the last task the records hold, to tell them apart.
 */
export function resumableSheep(cards: readonly ResumeCard[], registry: Registry | undefined): ResumableSheep[] {
  const last = new Map<string, { at: string; line: string }>();
  for (const p of registry?.prompts.values() ?? []) {
    const seen = last.get(p.agentId);
    if (p.firstLine && (!seen || seen.at <= p.submittedAt)) last.set(p.agentId, { at: p.submittedAt, line: p.firstLine });
  }
  return cards
    .filter((c) => {
      const rec = registry?.agents.get(c.agentId);
      if (rec && rec.state !== "closed" && rec.state !== "exited") return false;
      return registry?.sessionUser(c.sessionPath) === undefined;
    })
    .map((c) => {
      const task = last.get(c.agentId)?.line;
      return { agentId: c.agentId, label: c.label, agent: c.agent, createdAt: c.createdAt, ...(task ? { lastTask: task } : {}) };
    });
}
