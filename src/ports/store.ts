import type { AgentRecord, DelegationRecord, PromptRecord } from "./types.ts";

/** Token counts and cost summed over settled prompts. */
export interface UsageSum {
  input: number;
  output: number;
  cost: number;
  /** Settled prompts counted. */
  prompts: number;
}

/**
 * What one shepherd's herd spent in prompts its records no longer hold (closed sheep dropped, old
 * prompts let go): the records cannot count those again after a reload or a restart, so this does.
 */
export interface TallyRecord extends UsageSum {
  owner: string;
  /** The same by local day (YYYY-MM-DD): today's and yesterday's at most. */
  days: (UsageSum & { day: string })[];
}

/** What survives a reload or a restart of the shepherd: the records, not the processes. */
export interface StoredState {
  agents: AgentRecord[];
  prompts: PromptRecord[];
  /** Background delegations (absent in files written before they existed). */
  delegations?: DelegationRecord[];
  /** With save: agentIds this shepherd let go of, whoever's name the stored copy still bears. */
  forgotten?: string[];
  /** The herd's spend its records no longer hold, one per shepherd (absent in files written before it was kept). */
  tallies?: TallyRecord[];
  /** With save: owners whose tallies this shepherd took over (their records adopted). */
  forgottenTallies?: string[];
}

export interface StateStore {
  /** Every shepherd's records, and warnings (e.g. a corrupt file moved aside). */
  load(): Promise<{ state: StoredState; warnings: string[] }>;
  /** Replaces the records of `owner` (and of the agents listed) with these, keeping everyone else's. */
  save(owner: string, mine: StoredState): Promise<void>;
}
