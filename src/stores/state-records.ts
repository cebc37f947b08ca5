import { HOST_NAME } from "../domain/hosts.ts";
import { countOf, MAX_COST } from "../domain/sheep-data.ts";
import { BUDGET_KEYS, budgetFrom } from "../domain/budget.ts";
import { ledgerKeyProblem } from "../domain/budget-day.ts";
import { isRecord } from "../domain/guards.ts";
import { isWellFormedId, PANE_ID } from "../domain/ids.ts";
import { labelProblem, MAX_LABEL_LENGTH } from "../domain/labels.ts";
import { FIRST_LINE_CHARS, MAX_NAME_CHARS, MAX_QUEUED, MAX_REQUEST_ID_CHARS } from "../domain/bounds.ts";
import type { AgentRecord, AgentState, DelegateMode, DelegationRecord, PromptRecord, WaitStatus } from "../ports/types.ts";
import { EDGES } from "../ports/types.ts";
import { basename, dirname, isAbsolute, normalize } from "node:path";
import type { RuntimeName } from "../ports/runtime.ts";
import { OBJECT_ID, WORKTREE_BRANCH } from "../ports/workspace.ts";

/**
 * state.json is a file anyone with the user's rights can edit, and its records become paths
 * (the sheep directory is named by agentId), multiplexer targets (paneId) and text on the user's
 * terminal (labels). Nothing read from it is used before it passes these checks.
 */

// Records keyed by the union: adding a state or a status to the type fails to compile until it is listed.
const agentStates: Record<AgentState, true> = { starting: true, idle: true, working: true, blocked: true, exited: true, closed: true };
const waitStatuses: Record<WaitStatus, true> = { completed: true, failed: true, timeout: true, cancelled: true, blocked: true };
const runtimes: Record<RuntimeName, true> = { tmux: true, herdr: true };
const modes: Record<DelegateMode, true> = { single: true, parallel: true, chain: true };
/** More steering messages than any turn takes: a record with more is not ours. */
const MAX_STEERS = 1000;
/** A delegation has at most the tasks a delegate call may take (and the setting cannot raise it past this). */
const MAX_DELEGATION_ITEMS = 64;

/** C0, DEL, C1 and the bidi overrides: any of them lets a value repaint or reorder the user's screen. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Problem = string | undefined;

function has(values: Record<string, true>, x: unknown): boolean {
  return typeof x === "string" && Object.hasOwn(values, x);
}

/** Shown text: one line, no escapes, a bounded length. */
function plainText(x: unknown, max: number): boolean {
  return typeof x === "string" && x.length > 0 && x.length <= max && !CONTROL.test(x);
}

function optional(r: Record<string, unknown>, key: string, ok: (x: unknown) => boolean): Problem {
  return r[key] === undefined || ok(r[key]) ? undefined : `${key} is not well-formed`;
}

const id = (kind: Parameters<typeof isWellFormedId>[1]) => (x: unknown) => typeof x === "string" && isWellFormedId(x, kind);
/** A time as the core writes it (toISOString): one a view can count from and print without throwing. */
const isoTime = (x: unknown) => typeof x === "string" && x.length <= 32 && Number.isFinite(Date.parse(x));
const count = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
const ids = (kind: Parameters<typeof isWellFormedId>[1], max: number) => (x: unknown) => Array.isArray(x) && x.length <= max && x.every(id(kind));

/** A path git will be pointed at: absolute, normalized (no ".." steps), nothing a terminal would act on. */
function plainPath(x: unknown): x is string {
  return typeof x === "string" && isAbsolute(x) && normalize(x) === x && !x.includes("\0") && !CONTROL.test(x);
}

/**
 * A worktree record leads git to a directory and a branch to remove: only our own shapes pass, a
 * path named `<…>/worktrees/<agentId>` and a branch `shepherd/…`. The agentId is the sheep's own,
 * or, for a resumed sheep (`resumed`), that of the sheep of its conversation the worktree was made
 * for: a resumed isolated sheep takes that worktree over, and a load that refused its record lost
 * it and its work at the next reload.
 */
function worktreeProblem(w: unknown, agentId: string, resumed = false): Problem {
  if (!isRecord(w)) return "worktree is not an object";
  const madeFor = plainPath(w.path) ? basename(w.path) : undefined;
  const ours = madeFor === agentId || (resumed && madeFor !== undefined && isWellFormedId(madeFor, "agent"));
  if (!ours || basename(dirname(w.path as string)) !== "worktrees") return "worktree.path is not this sheep's worktree path";
  if (typeof w.branch !== "string" || !WORKTREE_BRANCH.test(w.branch)) return "worktree.branch is not a branch the shepherd makes";
  if (!plainPath(w.repoRoot)) return "worktree.repoRoot is not an absolute path";
  if (typeof w.base !== "string" || !OBJECT_ID.test(w.base)) return "worktree.base is not an object id";
  return count(w.leftBehind) ? undefined : "worktree.leftBehind is not a count";
}

function baselineProblem(b: unknown): Problem {
  if (!isRecord(b) || !plainPath(b.root) || typeof b.takenAt !== "string") return "baseline is not well-formed";
  if (typeof b.tree !== "string" || !OBJECT_ID.test(b.tree)) return "baseline.tree is not an object id";
  return (
    optional(b, "commit", (x) => typeof x === "string" && OBJECT_ID.test(x)) ??
    // The host a remote baseline's git runs on: a name of the hosts setting's shape, or none.
    optional(b, "host", (x) => typeof x === "string" && HOST_NAME.test(x))
  );
}

function evidenceProblem(e: unknown): Problem {
  if (!isRecord(e)) return "evidence is not an object";
  const bad = baselineProblem(e.baseline);
  if (bad) return `evidence: ${bad}`;
  if (typeof e.after !== "string" || !OBJECT_ID.test(e.after) || typeof e.afterAt !== "string") return "evidence.after is not an object id";
  if (e.afterCommit !== undefined && (typeof e.afterCommit !== "string" || !OBJECT_ID.test(e.afterCommit))) return "evidence.afterCommit is not an object id";
  if (!(["insertions", "deletions", "fileCount"] as const).every((k) => count(e[k]))) return "evidence counts are not counts";
  if (typeof e.patch !== "string" || !plainPath(e.patchPath) || typeof e.shared !== "boolean" || typeof e.truncated !== "boolean")
    return "evidence is not well-formed";
  const fileOk = (f: unknown) => isRecord(f) && typeof f.path === "string" && typeof f.status === "string" && count(f.insertions) && count(f.deletions);
  return Array.isArray(e.files) && e.files.every(fileOk) ? undefined : "evidence.files is not a file list";
}

/** A budget or a spend as the records hold them: only their own fields, each a count in range (summed into the day's views). */
function budgetShape(x: unknown): boolean {
  return (
    isRecord(x) &&
    Object.keys(x).length > 0 &&
    Object.keys(x).every((k) => (BUDGET_KEYS as readonly string[]).includes(k)) &&
    budgetFrom(x) !== undefined &&
    Object.keys(budgetFrom(x)!).length === Object.keys(x).length
  );
}
function spendShape(x: unknown): boolean {
  return (
    isRecord(x) && BUDGET_KEYS.every((k) => countOf(x[k], k === "costUsd" ? MAX_COST : undefined) !== undefined) && Object.keys(x).length === BUDGET_KEYS.length
  );
}

export function agentProblem(r: unknown): Problem {
  if (!isRecord(r)) return "not an object";
  if (typeof r.agentId !== "string" || !isWellFormedId(r.agentId, "agent")) return "agentId is not a well-formed agent id";
  if (!plainText(r.agent, MAX_NAME_CHARS)) return "agent is not a plain name";
  if (typeof r.label !== "string" || labelProblem(r.label)) return `label is not plain text of 1-${MAX_LABEL_LENGTH} characters`;
  if (!has(runtimes, r.runtime)) return "runtime is not tmux or herdr";
  if (r.host !== undefined && (typeof r.host !== "string" || !HOST_NAME.test(r.host))) return "host is not a host name";
  // A remote sheep's pane id is `<its host>/<the id there>`: the prefix must be the record's own host.
  const paneId = typeof r.paneId === "string" && typeof r.host === "string" && r.paneId.startsWith(`${r.host}/`) ? r.paneId.slice(r.host.length + 1) : r.paneId;
  if (typeof paneId !== "string" || !PANE_ID.test(paneId)) return "paneId is not a pane id";
  if (!has(agentStates, r.state)) return "state is not a known state";
  if (typeof r.owner !== "string" || r.owner === "") return "owner is not a string";
  for (const key of ["cwd", "sessionPath", "createdAt"] as const) {
    if (typeof r[key] !== "string") return `${key} is not a string`;
  }
  return (
    optional(r, "model", (x) => plainText(x, MAX_NAME_CHARS)) ??
    optional(r, "attachHint", (x) => plainText(x, 4096)) ??
    optional(r, "activePromptId", id("prompt")) ??
    optional(r, "queue", ids("prompt", MAX_QUEUED)) ??
    optional(r, "messagesRead", count) ??
    optional(r, "messagesHandled", count) ??
    optional(r, "resumedFrom", id("agent")) ??
    optional(r, "warm", (x) => x === true) ??
    optional(r, "renewed", (x) => x === true) ??
    optional(r, "sandboxed", (x) => x === true) ??
    optional(r, "budget", budgetShape) ??
    optional(r, "spent", spendShape) ??
    optional(r, "ledgerKey", (x) => typeof x === "string" && !ledgerKeyProblem(x)) ??
    optional(r, "ledgerDay", (x) => typeof x === "string" && /^\d{4}-\d{2}-\d{2}$/.test(x)) ??
    optional(r, "ledgerBase", spendShape) ??
    optional(r, "budgetWarned", (x) => x === true) ??
    (r.worktree === undefined ? undefined : worktreeProblem(r.worktree, r.agentId, r.resumedFrom !== undefined))
  );
}

export function promptProblem(r: unknown): Problem {
  if (!isRecord(r)) return "not an object";
  if (typeof r.promptId !== "string" || !isWellFormedId(r.promptId, "prompt")) return "promptId is not a well-formed prompt id";
  if (typeof r.agentId !== "string" || !isWellFormedId(r.agentId, "agent")) return "agentId is not a well-formed agent id";
  if (typeof r.submittedAt !== "string") return "submittedAt is not a string";
  const extra =
    optional(r, "notify", (x) => x === true) ??
    optional(r, "requestId", (x) => typeof x === "string" && x.length > 0 && x.length <= MAX_REQUEST_ID_CHARS) ??
    optional(r, "delivered", (x) => isRecord(x) && (x.by === "wait" || x.by === "push") && typeof x.at === "string") ??
    optional(r, "steerIds", ids("steer", MAX_STEERS)) ??
    optional(r, "delegationId", id("delegation")) ??
    (r.baseline === undefined ? undefined : baselineProblem(r.baseline)) ??
    optional(r, "evidenceError", (x) => typeof x === "string") ??
    optional(r, "firstLine", (x) => typeof x === "string" && x.length <= FIRST_LINE_CHARS) ??
    optional(r, "startedAt", isoTime) ??
    optional(r, "finishedAt", isoTime) ??
    optional(r, "edge", (x) => (EDGES as readonly unknown[]).includes(x)) ??
    optional(r, "shown", (x) => isRecord(x) && (EDGES as readonly unknown[]).includes(x.edge) && typeof x.at === "string") ??
    optional(r, "announced", (x) => x === true);
  if (extra) return extra;
  if (r.settled === undefined) return undefined;
  const s = r.settled;
  if (!isRecord(s) || !has(waitStatuses, s.status)) return "settled has no known status";
  return (
    optional(s, "text", (x) => typeof x === "string") ??
    optional(s, "error", (x) => typeof x === "string") ??
    optional(s, "evidenceError", (x) => typeof x === "string") ??
    // Summed into totals and /metrics: counts in range, never text a sheep once wrote there.
    optional(s, "usage", (x) => isRecord(x) && Object.values(x).every((n) => countOf(n) !== undefined)) ??
    optional(s, "durationMs", (x) => countOf(x) !== undefined) ??
    optional(s, "spent", spendShape) ??
    optional(s, "budget", budgetShape) ??
    (s.evidence === undefined ? undefined : evidenceProblem(s.evidence))
  );
}

function itemProblem(x: unknown): Problem {
  if (!isRecord(x)) return "an item is not an object";
  if (!plainText(x.agent, MAX_NAME_CHARS) || typeof x.task !== "string") return "an item has no plain agent name or no task";
  const bad =
    optional(x, "agentId", id("agent")) ??
    optional(x, "promptId", id("prompt")) ??
    optional(x, "status", (v) => has(waitStatuses, v)) ??
    optional(x, "text", (v) => typeof v === "string") ??
    optional(x, "error", (v) => typeof v === "string") ??
    optional(x, "step", (v) => Number.isSafeInteger(v) && (v as number) > 0) ??
    optional(x, "evidenceError", (v) => typeof v === "string") ??
    (x.evidence === undefined ? undefined : evidenceProblem(x.evidence)) ??
    (x.worktree === undefined || typeof x.agentId !== "string"
      ? x.worktree === undefined
        ? undefined
        : "worktree without agentId"
      : worktreeProblem(x.worktree, x.agentId));
  return bad && `an item's ${bad}`;
}

export function delegationProblem(r: unknown): Problem {
  if (!isRecord(r)) return "not an object";
  if (!id("delegation")(r.delegationId)) return "delegationId is not a well-formed delegation id";
  if (typeof r.owner !== "string" || r.owner === "") return "owner is not a string";
  if (!has(modes, r.mode)) return "mode is not single, parallel or chain";
  if (typeof r.keepOpen !== "boolean" || typeof r.createdAt !== "string") return "keepOpen or createdAt is missing";
  if (!Array.isArray(r.items) || r.items.length === 0 || r.items.length > MAX_DELEGATION_ITEMS) return `items is not a list of 1-${MAX_DELEGATION_ITEMS} tasks`;
  for (const item of r.items) {
    const bad = itemProblem(item);
    if (bad) return bad;
  }
  return (
    optional(r, "done", (x) => x === true) ??
    optional(r, "delivered", (x) => isRecord(x) && typeof x.at === "string") ??
    (r.reservations === undefined ? undefined : reservationsProblem(r.reservations, r.items.length))
  );
}

/** A delegation's reservations become ledger entries let go by key: each names one of its tasks once, a ledger key and a budget, nothing else. */
function reservationsProblem(x: unknown, items: number): Problem {
  if (!Array.isArray(x) || x.length > items) return "reservations is not a list of at most one per task";
  const seen = new Set<unknown>();
  for (const r of x) {
    const ok =
      isRecord(r) &&
      Object.keys(r).length === 3 &&
      Number.isSafeInteger(r.item) &&
      (r.item as number) >= 0 &&
      (r.item as number) < items &&
      !seen.has(r.item) &&
      typeof r.key === "string" &&
      !ledgerKeyProblem(r.key) &&
      budgetShape(r.budget);
    if (!ok) return "a reservation is not {item, key, budget} of one of its tasks";
    seen.add(r.item);
  }
  return undefined;
}

export interface RejectedRecord {
  kind: "agent" | "prompt" | "delegation";
  /** Position in the file's list, so the user can find it; the record's own fields may be hostile. */
  index: number;
  reason: string;
  record: unknown;
}

export interface CheckedRecords {
  agents: AgentRecord[];
  prompts: PromptRecord[];
  delegations: DelegationRecord[];
  rejected: RejectedRecord[];
}

function idCounts(records: readonly unknown[], key: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) {
    const id = isRecord(r) ? r[key] : undefined;
    if (typeof id === "string") counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Splits loaded records into usable ones and the rest; a prompt follows its agent out. */
export function checkRecords(agents: readonly unknown[], prompts: readonly unknown[], delegations: readonly unknown[] = []): CheckedRecords {
  const out: CheckedRecords = { agents: [], prompts: [], delegations: [], rejected: [] };
  // Two records under one id: neither can be trusted to be the real one.
  const agentIds = idCounts(agents, "agentId");
  const promptIds = idCounts(prompts, "promptId");
  const rejectedAgents = new Set<string>();
  agents.forEach((record, index) => {
    const a = record as AgentRecord;
    const reason = agentProblem(record) ?? (agentIds.get(a.agentId)! > 1 ? "agentId appears more than once" : undefined);
    if (reason === undefined) {
      // Only a view counts from it: one that is not a time is dropped, never the sheep's record.
      if (a.stateSince !== undefined && !isoTime(a.stateSince)) delete a.stateSince;
      out.agents.push(a);
      return;
    }
    if (isRecord(record) && typeof record.agentId === "string") rejectedAgents.add(record.agentId);
    out.rejected.push({ kind: "agent", index, reason, record });
  });
  prompts.forEach((record, index) => {
    const p = record as PromptRecord;
    const reason =
      promptProblem(record) ??
      (rejectedAgents.has(p.agentId) ? "its agent record was set aside" : undefined) ??
      (promptIds.get(p.promptId)! > 1 ? "promptId appears more than once" : undefined);
    if (reason === undefined) {
      out.prompts.push(p);
      return;
    }
    out.rejected.push({ kind: "prompt", index, reason, record });
  });
  const delegationIds = idCounts(delegations, "delegationId");
  delegations.forEach((record, index) => {
    const d = record as DelegationRecord;
    const reason = delegationProblem(record) ?? (delegationIds.get(d.delegationId)! > 1 ? "delegationId appears more than once" : undefined);
    if (reason === undefined) out.delegations.push(d);
    else out.rejected.push({ kind: "delegation", index, reason, record });
  });
  return out;
}

/** One line for the user: how many, and why, without echoing the (possibly hostile) values. */
export function rejectionSummary(rejected: readonly RejectedRecord[]): string {
  // Grouped by reason, so a file of ten thousand bad records still makes a short line.
  const groups = new Map<string, number>();
  for (const r of rejected) groups.set(`${r.kind}: ${r.reason}`, (groups.get(`${r.kind}: ${r.reason}`) ?? 0) + 1);
  return [...groups].map(([why, n]) => (n === 1 ? why : `${why} (x${n})`)).join("; ");
}
