import type { StateStore, StoredState } from "../../src/ports/store.ts";

/** The state file's merge rules, in memory. */
export class MemoryStore implements StateStore {
  state: StoredState = { agents: [], prompts: [] };
  /** Owners whose process died: whatever their leftover code still does never reaches the disk. */
  readonly dead = new Set<string>();
  async load() {
    return { state: structuredClone(this.state), warnings: [] };
  }
  async save(owner: string, mine: StoredState) {
    if (this.dead.has(owner)) return;
    const ids = new Set([...mine.agents.map((a) => a.agentId), ...(mine.forgotten ?? [])]);
    const agents = [...this.state.agents.filter((a) => a.owner !== owner && !ids.has(a.agentId)), ...mine.agents];
    const keep = new Set(agents.map((a) => a.agentId));
    const mineD = new Set((mine.delegations ?? []).map((d) => d.delegationId));
    this.state = {
      agents,
      prompts: [...this.state.prompts.filter((p) => keep.has(p.agentId) && !ids.has(p.agentId)), ...mine.prompts],
      delegations: [...(this.state.delegations ?? []).filter((d) => d.owner !== owner && !mineD.has(d.delegationId)), ...(mine.delegations ?? [])],
    };
    delete this.state.forgotten;
  }
}
