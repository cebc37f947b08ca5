import { ShepherdError } from "../core/errors.js";
import type { Registry } from "../core/registry.js";

/**
 * A person names a sheep by its label as often as by its id. Only live sheep are looked up by
 * label (labels of closed sheep may be reused); an id is passed through so the core gives its
 * own precise error (closed, a promptId, …).
 */
export function resolveTarget(registry: Registry, target: string): string {
  if (registry.agents.has(target)) return target;
  const byLabel = registry.liveByLabel(target);
  if (byLabel) return byLabel.agentId;
  if (/^[ap]_/.test(target)) return target;
  throw new ShepherdError("unknown_agent", `no live sheep with id or label "${target}"; /shepherd herd lists them.`);
}

/** Live sheep for completions: label and id of every record that is not closed. */
export function liveSheep(registry: Registry): { agentId: string; label: string; agent: string; state: string }[] {
  return [...registry.agents.values()]
    .filter((a) => a.state !== "closed")
    .map((a) => ({ agentId: a.agentId, label: a.label, agent: a.agent, state: a.state }));
}
