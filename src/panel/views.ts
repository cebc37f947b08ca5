/**
 * A sheep as the panel shows it (the fleet, a sheep's page, the `sheep` event): built from the
 * records and the view every live view shares (state and its clock), plus what the feed knows of
 * the sheep's messages. No file is read here and no multiplexer asked: 64 sheep in well under a
 * millisecond.
 */
import type { Budget, Spend } from "../domain/budget.ts";
import type { Shepherd } from "../core/shepherd.ts";
import type { AgentRecord, AgentState, PromptRecord } from "../ports/types.ts";
import { LOCAL_HOST } from "../domain/hosts.ts";
import { countOf, MAX_COST } from "../domain/sheep-data.ts";

export interface PanelUsage {
  input: number;
  output: number;
  cost?: number;
}

export interface PanelSheep {
  agentId: string;
  label: string;
  agent: string;
  /** Where the sheep runs: "local" for this machine. */
  host: string;
  state: AgentState;
  since: string;
  model?: string;
  cwd: string;
  activePromptId?: string;
  /** The first line of the active prompt. */
  working?: string;
  queue: number;
  unread: number;
  /** Questions that wait for a reply. */
  questions: number;
  isolated: boolean;
  worktree?: { path: string; branch: string };
  /** Its pi runs in bubblewrap: what it tries to reach is in its egress log (GET …/egress). */
  sandboxed: boolean;
  usage: PanelUsage;
  /** What it spent since it started, and its budget (spec: Budgets). */
  spent?: Spend;
  budget?: Budget;
}

export interface PanelPrompt {
  promptId: string;
  status: string;
  firstLine: string;
  startedAt?: string;
  finishedAt?: string;
  evidence: boolean;
}

/** What the feed read last of a sheep's messages. */
export interface MailCount {
  count: number;
  questions: number;
}

export interface Totals {
  sheep: number;
  byState: Partial<Record<AgentState, number>>;
  input: number;
  output: number;
  cost: number;
}

/** The host a record names (remote hosts add one); this machine's otherwise. */
export function hostOf(rec: AgentRecord): string {
  return rec.host ?? LOCAL_HOST;
}

/** Usage of each sheep, summed over the settled prompts kept: one pass over the prompts. */
export function usageBySheep(prompts: Iterable<PromptRecord>): Map<string, PanelUsage> {
  const out = new Map<string, PanelUsage>();
  for (const p of prompts) {
    const u = p.settled?.usage;
    if (!u) continue;
    const sum = out.get(p.agentId) ?? { input: 0, output: 0 };
    // Checked where they were read; a sum still takes numbers only, so it never turns to text.
    sum.input += countOf(u.input) ?? 0;
    sum.output += countOf(u.output) ?? 0;
    const cost = countOf(u.cost, MAX_COST);
    if (cost !== undefined) sum.cost = (sum.cost ?? 0) + cost;
    out.set(p.agentId, sum);
  }
  return out;
}

export function panelSheep(shepherd: Shepherd, rec: AgentRecord, mail: MailCount | undefined, usage: PanelUsage | undefined): PanelSheep {
  const reg = shepherd.registry;
  const view = shepherd.view(rec.agentId);
  const active = reg.pending(rec);
  const unread = Math.max(0, (mail?.count ?? 0) - (rec.messagesRead ?? 0));
  return {
    agentId: rec.agentId,
    label: rec.label,
    agent: rec.agent,
    host: hostOf(rec),
    state: rec.state,
    // A working sheep counts from its prompt (the clock every live view has); any other from its last change of state.
    since: view?.since ?? rec.stateSince ?? rec.createdAt,
    ...(rec.model !== undefined ? { model: rec.model } : {}),
    cwd: rec.cwd,
    ...(active ? { activePromptId: active.promptId } : {}),
    ...(active?.firstLine ? { working: active.firstLine } : {}),
    queue: rec.queue?.length ?? 0,
    unread,
    questions: mail?.questions ?? 0,
    isolated: rec.worktree !== undefined,
    ...(rec.worktree ? { worktree: { path: rec.worktree.path, branch: rec.worktree.branch } } : {}),
    sandboxed: rec.sandboxed === true,
    usage: usage ?? { input: 0, output: 0 },
    ...(rec.spent ? { spent: rec.spent } : {}),
    ...(rec.budget ? { budget: rec.budget } : {}),
  };
}

/** Every sheep of this shepherd that is not closed, with the herd's totals. */
export function panelHerd(shepherd: Shepherd, mail: ReadonlyMap<string, MailCount>): { sheep: PanelSheep[]; totals: Totals } {
  const usage = usageBySheep(shepherd.registry.prompts.values());
  const sheep: PanelSheep[] = [];
  const totals: Totals = { sheep: 0, byState: {}, input: 0, output: 0, cost: 0 };
  for (const rec of shepherd.registry.agents.values()) {
    if (rec.state === "closed") continue;
    const v = panelSheep(shepherd, rec, mail.get(rec.agentId), usage.get(rec.agentId));
    sheep.push(v);
    totals.sheep++;
    totals.byState[v.state] = (totals.byState[v.state] ?? 0) + 1;
    totals.input += v.usage.input;
    totals.output += v.usage.output;
    totals.cost += v.usage.cost ?? 0;
  }
  return { sheep, totals };
}

/** A sheep's prompts kept in the records, oldest first. */
export function panelPrompts(shepherd: Shepherd, rec: AgentRecord): PanelPrompt[] {
  const reg = shepherd.registry;
  const active = reg.pending(rec);
  const queued = new Set(rec.queue ?? []);
  const out: PanelPrompt[] = [];
  for (const p of reg.prompts.values()) {
    if (p.agentId !== rec.agentId) continue;
    const s = p.settled;
    const status = s ? s.status : p === active ? "working" : queued.has(p.promptId) ? "queued" : "pending";
    // A follow-up still queued has not started; one the sheep took started then, not when it was sent.
    const started = p.startedAt ?? (status === "queued" ? undefined : p.submittedAt);
    const finished = p.finishedAt ?? (s?.durationMs !== undefined && started ? isoAt(Date.parse(started) + s.durationMs) : undefined);
    out.push({
      promptId: p.promptId,
      status,
      firstLine: p.firstLine ?? "",
      ...(started ? { startedAt: started } : {}),
      ...(finished ? { finishedAt: finished } : {}),
      evidence: s?.evidence !== undefined,
    });
  }
  return out;
}

/** An instant as ISO text, or nothing where there is none to show: a view never throws on a time. */
function isoAt(ms: number): string | undefined {
  const d = new Date(ms);
  return Number.isFinite(d.getTime()) ? d.toISOString() : undefined;
}
