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
import type { UsageSum } from "../core/herd/usage-tally.ts";
import { type HerdFilter, LIVE_ONLY, matches } from "./history.ts";

/** The most of one answer a sheep's page is sent; the session file (its path is shown) holds it whole. */
export const MAX_ANSWER_CHARS = 64 * 1024;

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
  /** Its pi's session file (kept after close): the whole conversation. */
  sessionPath: string;
  createdAt: string;
  /** The background delegation it ran a task of, when it did. */
  delegationId?: string;
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
  /** What the sheep answered (at most MAX_ANSWER_CHARS; `answerTruncated` when cut), or why it failed. */
  answer?: string;
  answerTruncated?: true;
  error?: string;
  usage?: PanelUsage;
  /** What its evidence counts: the files changed and their lines (the patch: GET …/diff?promptId=). */
  changes?: { fileCount: number; insertions: number; deletions: number };
  delegationId?: string;
}

/** What the feed read last of a sheep's messages. */
export interface MailCount {
  count: number;
  questions: number;
}

export interface Totals {
  /** Sheep that are not closed, and those by state. */
  sheep: number;
  byState: Partial<Record<AgentState, number>>;
  /** Closed sheep whose records are kept (the newest 64, and every one that kept a worktree). */
  closed: number;
  /** What the herd spent, closed sheep included (never shrinks while the shepherd runs), and today. */
  input: number;
  output: number;
  cost: number;
  prompts: number;
  today: UsageSum & { day: string };
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
    sessionPath: rec.sessionPath,
    createdAt: rec.createdAt,
    ...(delegationOf(shepherd, rec) ?? {}),
    ...(rec.spent ? { spent: rec.spent } : {}),
    ...(rec.budget ? { budget: rec.budget } : {}),
  };
}

/** The background delegation a sheep ran a task of, as its prompts say. */
function delegationOf(shepherd: Shepherd, rec: AgentRecord): { delegationId: string } | undefined {
  for (const d of shepherd.registry.delegations.values()) if (d.items.some((i) => i.agentId === rec.agentId)) return { delegationId: d.delegationId };
  return undefined;
}

/**
 * The sheep of this shepherd the filter takes (by default those not closed), with the herd's
 * totals: those count every sheep, closed ones too, whatever the filter shows.
 */
export function panelHerd(shepherd: Shepherd, mail: ReadonlyMap<string, MailCount>, filter: HerdFilter = LIVE_ONLY): { sheep: PanelSheep[]; totals: Totals } {
  const usage = usageBySheep(shepherd.registry.prompts.values());
  const sheep: PanelSheep[] = [];
  const spent = shepherd.usage();
  const totals: Totals = {
    sheep: 0,
    byState: {},
    closed: 0,
    input: spent.input,
    output: spent.output,
    cost: spent.cost,
    prompts: spent.prompts,
    today: spent.today,
  };
  for (const rec of shepherd.registry.agents.values()) {
    if (rec.state === "closed") totals.closed++;
    else {
      totals.sheep++;
      totals.byState[rec.state] = (totals.byState[rec.state] ?? 0) + 1;
    }
    if (matches(rec, filter)) sheep.push(panelSheep(shepherd, rec, mail.get(rec.agentId), usage.get(rec.agentId)));
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
    const used = s?.usage ? usageBySheep([p]).get(p.agentId) : undefined;
    const text = typeof s?.text === "string" ? s.text : undefined;
    out.push({
      promptId: p.promptId,
      status,
      firstLine: p.firstLine ?? "",
      ...(started ? { startedAt: started } : {}),
      ...(finished ? { finishedAt: finished } : {}),
      evidence: s?.evidence !== undefined,
      ...(text !== undefined ? { answer: text.slice(0, MAX_ANSWER_CHARS) } : {}),
      ...(text !== undefined && text.length > MAX_ANSWER_CHARS ? { answerTruncated: true as const } : {}),
      ...(typeof s?.error === "string" ? { error: s.error } : {}),
      ...(used ? { usage: used } : {}),
      ...(s?.evidence ? { changes: { fileCount: s.evidence.fileCount, insertions: s.evidence.insertions, deletions: s.evidence.deletions } } : {}),
      ...(p.delegationId !== undefined ? { delegationId: p.delegationId } : {}),
    });
  }
  return out;
}

/** An instant as ISO text, or nothing where there is none to show: a view never throws on a time. */
function isoAt(ms: number): string | undefined {
  const d = new Date(ms);
  return Number.isFinite(d.getTime()) ? d.toISOString() : undefined;
}
