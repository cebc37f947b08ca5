/**
 * Whose a record is: ours, or a sheep of another live shepherd on the same agent dir, named as such
 * instead of as unknown. Read by every primitive that takes a sheep, below attach and close.
 */
import { ShepherdError } from "../../domain/errors.ts";
import type { AgentId } from "../../domain/ids.ts";
import type { Herd } from "./herd.ts";
import type { AgentRecord } from "../../ports/types.ts";

/** Our record of a sheep; a sheep of another live shepherd is named as such, not as unknown. */
export async function findRecord(herd: Herd, agentId: AgentId): Promise<AgentRecord> {
  try {
    return herd.registry.agent(agentId);
  } catch (e) {
    const store = herd.opts.store;
    if (!store) throw e;
    const { state } = await store.load().catch(() => ({ state: { agents: [] as AgentRecord[] } }));
    const foreign = state.agents.find((a) => a.agentId === agentId && a.owner !== herd.opts.owner);
    if (foreign) {
      throw new ShepherdError("not_owned", `sheep ${agentId} (${foreign.label}) belongs to another running shepherd; only it may use or close it.`);
    }
    throw e;
  }
}

/** Sheep recorded by other shepherds on the same agent dir, as they recorded them; never touched. */
export async function othersSheep(herd: Herd): Promise<AgentRecord[]> {
  if (!herd.opts.store) return [];
  const { state } = await herd.opts.store.load();
  return state.agents.filter((a) => a.owner !== herd.opts.owner && a.state !== "closed" && !a.warm && !herd.registry.agents.has(a.agentId));
}
