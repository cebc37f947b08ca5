import type { Registry } from "../core/registry.js";

/** Live sheep for completions: label and id of every record that is not closed. */
export function liveSheep(registry: Registry): { agentId: string; label: string; agent: string; state: string }[] {
  return [...registry.agents.values()].filter((a) => a.state !== "closed").map((a) => ({ agentId: a.agentId, label: a.label, agent: a.agent, state: a.state }));
}
