/**
 * The day's ledger of the herd's spend (issue 35), as pure data: one entry per sheep (by its ledger
 * key) that every shepherd of the user writes under one lock. The file store (src/stores/spend-ledger.ts)
 * and the tests' in-memory one share these rules, so what counts is said once.
 */
import { isRecord } from "./guards.ts";
import { type DailyBudgets, type Reservation, type Spend, spendFrom, usd } from "./budget.ts";
import { countOf, MAX_COST, timeOf } from "./sheep-data.ts";

/** One sheep's part of the day: its running total at the day's first report (`from`) and its latest (`to`). */
export interface DayEntry {
  from: Spend;
  to: Spend;
  /** What it reserved at its start; counted while it is open and has spent less. */
  reserved?: Reservation;
  open: boolean;
  at: string;
}

export interface DayLedger {
  day: string;
  sheep: Record<string, DayEntry>;
}

/** What the day's limits count: tokens and cost, every sheep's spend or its open reservation, the larger. */
export interface DayTotals {
  tokens: number;
  costUsd: number;
}

/** Entries one day's file holds; past it the oldest closed ones are summed into one (REST_KEY): nothing is lost. */
export const MAX_DAY_ENTRIES = 2048;
export const REST_KEY = "_rest";
/** A ledger key: an agentId or a reservation's own id, nothing a path or a shell could mind. */
const KEY = /^[\w.:-]{1,128}$/;

export function spentOf(e: DayEntry): Spend {
  return {
    tokens: Math.max(0, e.to.tokens - e.from.tokens),
    outputTokens: Math.max(0, e.to.outputTokens - e.from.outputTokens),
    costUsd: Math.max(0, e.to.costUsd - e.from.costUsd),
  };
}

export function dayTotals(l: DayLedger): DayTotals {
  let tokens = 0;
  let costUsd = 0;
  for (const e of Object.values(l.sheep)) {
    const s = spentOf(e);
    tokens += e.open ? Math.max(s.tokens, e.reserved?.tokens ?? 0) : s.tokens;
    costUsd += e.open ? Math.max(s.costUsd, e.reserved?.costUsd ?? 0) : s.costUsd;
  }
  return { tokens, costUsd };
}

/** What the day's sheep really spent, reservations left out: what the day's warning and limit events count. */
export function daySpent(l: DayLedger): DayTotals {
  let tokens = 0;
  let costUsd = 0;
  for (const e of Object.values(l.sheep)) {
    const s = spentOf(e);
    tokens += s.tokens;
    costUsd += s.costUsd;
  }
  return { tokens, costUsd };
}

/** Why the reservations do not fit what is left of the day, with the numbers; undefined when they fit. */
export function reservationProblem(used: DayTotals, wanted: Reservation[], daily: DailyBudgets): string | undefined {
  const tokens = wanted.reduce((n, r) => n + r.tokens, 0);
  const cost = wanted.reduce((n, r) => n + r.costUsd, 0);
  const many = wanted.length === 1 ? "this start reserves" : `these ${wanted.length} sheep reserve`;
  if (daily.dailyTokens !== undefined && used.tokens + tokens > daily.dailyTokens) {
    return `${many} ${tokens} tokens, but ${Math.max(0, daily.dailyTokens - used.tokens)} of the day's ${daily.dailyTokens} are left (${used.tokens} spent or reserved today)`;
  }
  if (daily.dailyCostUsd !== undefined && used.costUsd + cost > daily.dailyCostUsd) {
    return `${many} $${usd(cost)}, but $${usd(Math.max(0, daily.dailyCostUsd - used.costUsd))} of the day's $${usd(daily.dailyCostUsd)} are left ($${usd(used.costUsd)} spent or reserved today)`;
  }
  return undefined;
}

/** The new reservations, each an open entry that has spent nothing yet. */
export function withReservations(l: DayLedger, wanted: { key: string; reservation: Reservation }[], at: string): void {
  for (const w of wanted) l.sheep[w.key] = { from: zero(), to: zero(), reserved: w.reservation, open: true, at };
}

/**
 * A sheep's running total reported: the day's entry keeps the larger total (reports are idempotent
 * and may come out of order); a sheep first seen today counts from `base`, what an earlier day counted.
 */
export function withReport(l: DayLedger, key: string, total: Spend, base: Spend, open: boolean, at: string): void {
  const e = l.sheep[key];
  if (!e) {
    l.sheep[key] = { from: base, to: total, open, at };
    return;
  }
  e.to = {
    tokens: Math.max(e.to.tokens, total.tokens),
    outputTokens: Math.max(e.to.outputTokens, total.outputTokens),
    costUsd: Math.max(e.to.costUsd, total.costUsd),
  };
  e.open = e.open && open;
  e.at = at;
}

/** Past MAX_DAY_ENTRIES, the oldest closed entries become one sum: the day's totals stay exact. */
export function bounded(l: DayLedger): DayLedger {
  const keys = Object.keys(l.sheep);
  if (keys.length <= MAX_DAY_ENTRIES) return l;
  const closed = keys.filter((k) => !l.sheep[k]!.open && k !== REST_KEY).sort((a, b) => l.sheep[a]!.at.localeCompare(l.sheep[b]!.at));
  const fold = closed.slice(0, keys.length - MAX_DAY_ENTRIES + 1);
  const rest = l.sheep[REST_KEY] ?? { from: zero(), to: zero(), open: false, at: l.sheep[fold[0]!]?.at ?? new Date(0).toISOString() };
  for (const k of fold) {
    const s = spentOf(l.sheep[k]!);
    rest.to = { tokens: rest.to.tokens + s.tokens, outputTokens: rest.to.outputTokens + s.outputTokens, costUsd: rest.to.costUsd + s.costUsd };
    delete l.sheep[k];
  }
  l.sheep[REST_KEY] = rest;
  return l;
}

/**
 * A day's file as read: anything else than the day's own object is refused (undefined), and each
 * entry that is not one is dropped; at most MAX_DAY_ENTRIES of them are kept.
 */
export function dayLedgerOf(v: unknown, day: string, now: number): DayLedger | undefined {
  if (!isRecord(v) || v.day !== day || !isRecord(v.sheep)) return undefined;
  const sheep: Record<string, DayEntry> = {};
  let n = 0;
  for (const [k, raw] of Object.entries(v.sheep)) {
    if (n >= MAX_DAY_ENTRIES) break;
    if (!KEY.test(k) || !isRecord(raw)) continue;
    const from = spendFrom(raw.from);
    const to = spendFrom(raw.to);
    const at = timeOf(raw.at, now);
    if (!from || !to || at === undefined || typeof raw.open !== "boolean") continue;
    const r = isRecord(raw.reserved) ? { tokens: countOf(raw.reserved.tokens) ?? 0, costUsd: countOf(raw.reserved.costUsd, MAX_COST) ?? 0 } : undefined;
    sheep[k] = { from, to, open: raw.open, at, ...(r ? { reserved: r } : {}) };
    n++;
  }
  return { day, sheep };
}

export function ledgerKeyProblem(key: string): boolean {
  return !KEY.test(key);
}

function zero(): Spend {
  return { tokens: 0, outputTokens: 0, costUsd: 0 };
}
