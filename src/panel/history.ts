/**
 * The herd's history as the panel lists it: which sheep a list shows (live, closed, all, one state;
 * a label, an agent, a host), and the background delegations as groups of their tasks.
 */
import { ShepherdError } from "../domain/errors.ts";
import { LOCAL_HOST } from "../domain/hosts.ts";
import { firstLineOf } from "../domain/bounds.ts";
import type { Shepherd } from "../core/shepherd.ts";
import type { AgentRecord, AgentState, DelegationRecord } from "../ports/types.ts";
import { countOf, MAX_COST } from "../domain/sheep-data.ts";

const STATES: readonly AgentState[] = ["starting", "idle", "working", "blocked", "exited", "closed"];
/** What `state=` takes: live (not closed), closed, all, or one state. */
export const STATE_FILTERS = ["live", "closed", "all", ...STATES.filter((s) => s !== "closed")] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export interface HerdFilter {
  state: StateFilter;
  /** Part of the label, any case. */
  label?: string;
  agent?: string;
  host?: string;
}

export const LIVE_ONLY: HerdFilter = { state: "live" };

/** The most of a filter's text: a label, an agent's or a host's name is short. */
const MAX_FILTER_CHARS = 256;

/** The list's query (`state`, `label`, `agent`, `host`), each at most once; anything else is refused. */
export function herdFilter(q: URLSearchParams): HerdFilter {
  for (const key of new Set(q.keys())) {
    if (!["state", "label", "agent", "host"].includes(key))
      throw new ShepherdError("invalid_params", `GET /api/v1/sheep takes no query parameter ${JSON.stringify(key)}; it takes state, label, agent and host.`);
    if (q.getAll(key).length > 1) throw new ShepherdError("invalid_params", `"${key}" is given more than once.`);
  }
  const state = q.get("state") ?? "live";
  if (!(STATE_FILTERS as readonly string[]).includes(state))
    throw new ShepherdError("invalid_params", `"state" must be one of ${STATE_FILTERS.join(", ")}; got ${JSON.stringify(state.slice(0, 40))}.`);
  const out: HerdFilter = { state: state as StateFilter };
  for (const key of ["label", "agent", "host"] as const) {
    const v = q.get(key);
    if (v === null || v === "") continue;
    if (v.length > MAX_FILTER_CHARS) throw new ShepherdError("invalid_params", `"${key}" is at most ${MAX_FILTER_CHARS} characters.`);
    out[key] = v;
  }
  return out;
}

export function matches(rec: AgentRecord, f: HerdFilter): boolean {
  if (f.state === "live" ? rec.state === "closed" : f.state !== "all" && f.state !== rec.state) return false;
  if (f.label !== undefined && !rec.label.toLowerCase().includes(f.label.toLowerCase())) return false;
  if (f.agent !== undefined && rec.agent !== f.agent) return false;
  if (f.host !== undefined && (rec.host ?? LOCAL_HOST) !== f.host) return false;
  return true;
}

export interface PanelTask {
  agent: string;
  /** The task's first line. */
  task: string;
  step?: number;
  agentId?: string;
  label?: string;
  promptId?: string;
  /** Its outcome once final; absent while it runs. */
  status?: string;
  error?: string;
  usage?: { input: number; output: number; cost?: number };
  changes?: { fileCount: number; insertions: number; deletions: number };
}

export interface PanelDelegation {
  delegationId: string;
  mode: string;
  createdAt: string;
  /** No task will start any more. */
  done: boolean;
  /** Its results went into the conversation. */
  delivered: boolean;
  tasks: PanelTask[];
}

function task(shepherd: Shepherd, i: DelegationRecord["items"][number]): PanelTask {
  const rec = i.agentId !== undefined ? shepherd.registry.agents.get(i.agentId) : undefined;
  const input = countOf(i.usage?.input);
  const output = countOf(i.usage?.output);
  const cost = countOf(i.usage?.cost, MAX_COST);
  return {
    agent: i.agent,
    task: firstLineOf(i.task),
    ...(i.step !== undefined ? { step: i.step } : {}),
    ...(i.agentId !== undefined ? { agentId: i.agentId } : {}),
    ...(rec ? { label: rec.label } : {}),
    ...(i.promptId !== undefined ? { promptId: i.promptId } : {}),
    ...(i.status !== undefined ? { status: i.status } : {}),
    ...(i.error !== undefined ? { error: i.error } : {}),
    ...(i.usage ? { usage: { input: input ?? 0, output: output ?? 0, ...(cost !== undefined ? { cost } : {}) } } : {}),
    ...(i.evidence ? { changes: { fileCount: i.evidence.fileCount, insertions: i.evidence.insertions, deletions: i.evidence.deletions } } : {}),
  };
}

/** This shepherd's background delegations kept (running ones, and the newest delivered), newest first. */
export function panelDelegations(shepherd: Shepherd): PanelDelegation[] {
  return [...shepherd.registry.delegations.values()]
    .filter((d) => d.owner === shepherd.owner)
    .reverse()
    .map((d) => ({
      delegationId: d.delegationId,
      mode: d.mode,
      createdAt: d.createdAt,
      done: d.done === true,
      delivered: d.delivered !== undefined,
      tasks: d.items.map((i) => task(shepherd, i)),
    }));
}
