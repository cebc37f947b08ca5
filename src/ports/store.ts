import type { AgentRecord, DelegationRecord, PromptRecord } from "./types.ts";

/** What survives a reload or a restart of the shepherd: the records, not the processes. */
export interface StoredState {
  agents: AgentRecord[];
  prompts: PromptRecord[];
  /** Background delegations (absent in files written before they existed). */
  delegations?: DelegationRecord[];
  /** With save: agentIds this shepherd let go of, whoever's name the stored copy still bears. */
  forgotten?: string[];
}

export interface StateStore {
  /** Every shepherd's records, and warnings (e.g. a corrupt file moved aside). */
  load(): Promise<{ state: StoredState; warnings: string[] }>;
  /** Replaces the records of `owner` (and of the agents listed) with these, keeping everyone else's. */
  save(owner: string, mine: StoredState): Promise<void>;
}
