/**
 * Budgets (issue 35): what a sheep may spend, what the herd may spend in a day, and the sums both
 * sides make of pi's usage counts. Pure: the edge parses budgets with it, the core reserves with it,
 * and the sheep's side stops its turn with it.
 */
import { ShepherdError } from "./errors.ts";
import { isRecord } from "./guards.ts";
import { countOf, MAX_COST, MAX_COUNT, type UsageCounts } from "./sheep-data.ts";

/** A sheep's budget: the `budget` of a start, a delegate task, a delegation or an agent file. */
export interface Budget {
  tokens?: number;
  outputTokens?: number;
  costUsd?: number;
}

/** What a sheep spent: every count pi reported, summed over its model responses. */
export interface Spend {
  tokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The user setting `budgets`: the herd's day, across every shepherd of the user. */
export interface DailyBudgets {
  dailyTokens?: number;
  dailyCostUsd?: number;
  /** The share of a limit at which a warning event goes out (default 0.8). */
  warnAt?: number;
}

export const BUDGET_KEYS = ["tokens", "outputTokens", "costUsd"] as const;
export const DAILY_KEYS = ["dailyTokens", "dailyCostUsd", "warnAt"] as const;
export const DEFAULT_WARN_AT = 0.8;
/**
 * What a sheep without a budget of its own reserves of a daily limit, and is then held to: a tenth
 * of the day's limit, so ten such sheep fit a fresh day and none of them can spend the whole of it.
 */
export const DEFAULT_RESERVE_SHARE = 0.1;

export const NO_SPEND: Spend = { tokens: 0, outputTokens: 0, costUsd: 0 };

function limitOf(key: string, v: unknown): number | undefined {
  return countOf(v, key === "costUsd" || key === "dailyCostUsd" ? MAX_COST : MAX_COUNT);
}

/** A budget as a call or an agent file gives it; anything else is refused with the reason. */
export function parseBudget(v: unknown, where: string): Budget {
  if (!isRecord(v)) throw new ShepherdError("invalid_params", `${where}: "budget" must be an object {"tokens"?, "outputTokens"?, "costUsd"?}.`);
  const out: Budget = {};
  for (const k of Object.keys(v)) {
    if (!(BUDGET_KEYS as readonly string[]).includes(k)) {
      throw new ShepherdError("invalid_params", `${where}: "budget" has no field "${k}"; it takes "tokens", "outputTokens" and "costUsd".`);
    }
    const n = limitOf(k, v[k]);
    if (n === undefined || n <= 0) throw new ShepherdError("invalid_params", `${where}: budget "${k}" must be a number above 0.`);
    out[k as keyof Budget] = n;
  }
  return out;
}

/** A budget read from a file (an inbox item, a record): only the valid fields, nothing thrown. */
export function budgetFrom(v: unknown): Budget | undefined {
  if (!isRecord(v)) return undefined;
  const out: Budget = {};
  for (const k of BUDGET_KEYS) {
    const n = limitOf(k, v[k]);
    if (n !== undefined && n > 0) out[k] = n;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The user setting `budgets`, or why it is not one. */
export function dailyBudgetsProblem(v: unknown): string | undefined {
  if (!isRecord(v)) return "not an object";
  for (const k of Object.keys(v)) {
    if (!(DAILY_KEYS as readonly string[]).includes(k)) return `unknown field "${k}"`;
    if (k === "warnAt") {
      const w = v[k];
      if (typeof w !== "number" || !(w > 0 && w <= 1)) return '"warnAt" must be a number above 0 and at most 1';
    } else {
      const n = limitOf(k, v[k]);
      if (n === undefined || n <= 0) return `"${k}" must be a number above 0`;
    }
  }
  return undefined;
}

/** A spend read from a file: each count checked, a missing or bad one is 0. */
export function spendFrom(v: unknown): Spend | undefined {
  if (!isRecord(v)) return undefined;
  return { tokens: countOf(v.tokens) ?? 0, outputTokens: countOf(v.outputTokens) ?? 0, costUsd: countOf(v.costUsd, MAX_COST) ?? 0 };
}

/** One model response's counts as spend: its total tokens (pi's total, else the parts), its output, its cost where reported. */
export function spendOfUsage(u: UsageCounts | undefined): Spend {
  if (!u) return NO_SPEND;
  const parts = (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
  return { tokens: u.totalTokens ?? parts, outputTokens: u.output ?? 0, costUsd: u.cost ?? 0 };
}

export function addSpend(a: Spend, b: Spend): Spend {
  return { tokens: a.tokens + b.tokens, outputTokens: a.outputTokens + b.outputTokens, costUsd: a.costUsd + b.costUsd };
}

/** The larger of two reports of one sheep's running total: reports can arrive out of order, a total never shrinks. */
export function maxSpend(a: Spend, b: Spend): Spend {
  return { tokens: Math.max(a.tokens, b.tokens), outputTokens: Math.max(a.outputTokens, b.outputTokens), costUsd: Math.max(a.costUsd, b.costUsd) };
}

/** Every budget given holds: per field the smallest, so no source (a project's agent file) can loosen another. */
export function tightest(...budgets: (Budget | undefined)[]): Budget | undefined {
  const out: Budget = {};
  for (const b of budgets) {
    for (const k of BUDGET_KEYS) {
      const n = b?.[k];
      if (n !== undefined) out[k] = out[k] === undefined ? n : Math.min(out[k]!, n);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The budget a sheep is held to: its own, and for each daily limit its own budget does not cover
 * (tokens, cost), DEFAULT_RESERVE_SHARE of that limit. Undefined: no limit at all.
 */
export function heldBudget(own: Budget | undefined, daily: DailyBudgets | undefined): Budget | undefined {
  const out: Budget = { ...own };
  if (daily?.dailyTokens !== undefined && out.tokens === undefined) out.tokens = Math.max(1, Math.floor(daily.dailyTokens * DEFAULT_RESERVE_SHARE));
  if (daily?.dailyCostUsd !== undefined && out.costUsd === undefined) out.costUsd = daily.dailyCostUsd * DEFAULT_RESERVE_SHARE;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The part of a held budget the day's limits count: its tokens and its cost. */
export interface Reservation {
  tokens: number;
  costUsd: number;
}

export function reservationOf(held: Budget | undefined, daily: DailyBudgets | undefined): Reservation {
  return {
    tokens: daily?.dailyTokens !== undefined ? (held?.tokens ?? 0) : 0,
    costUsd: daily?.dailyCostUsd !== undefined ? (held?.costUsd ?? 0) : 0,
  };
}

/** Which limit of the budget the spend reached, in words with both numbers; undefined while within it. */
export function overBudget(budget: Budget | undefined, spent: Spend): string | undefined {
  if (!budget) return undefined;
  if (budget.tokens !== undefined && spent.tokens >= budget.tokens) return `${spent.tokens} tokens spent of a budget of ${budget.tokens}`;
  if (budget.outputTokens !== undefined && spent.outputTokens >= budget.outputTokens)
    return `${spent.outputTokens} output tokens spent of a budget of ${budget.outputTokens}`;
  if (budget.costUsd !== undefined && spent.costUsd >= budget.costUsd) return `$${usd(spent.costUsd)} spent of a budget of $${usd(budget.costUsd)}`;
  return undefined;
}

/** Whether the spend reached the warning line of any limit of the budget. */
export function atWarningLine(budget: Budget | undefined, spent: Spend, warnAt: number): boolean {
  if (!budget) return false;
  return BUDGET_KEYS.some((k) => budget[k] !== undefined && spent[k] >= budget[k]! * warnAt);
}

export function usd(x: number): string {
  return x.toFixed(x >= 1 ? 2 : 4);
}

/** "1200 tokens, 300 output, $0.0120" of a spend, against the budget's limits where there are some. */
export function spendText(spent: Spend, budget?: Budget): string {
  const of = (n: number | undefined, f: (n: number) => string) => (n === undefined ? "" : `/${f(n)}`);
  const id = (n: number) => String(n);
  const money = (n: number) => `$${usd(n)}`;
  return [
    `${spent.tokens}${of(budget?.tokens, id)} tokens`,
    `${spent.outputTokens}${of(budget?.outputTokens, id)} output`,
    `${money(spent.costUsd)}${of(budget?.costUsd, money)}`,
  ].join(", ");
}

/** A count as the widget shows it: 950, 12.3k, 4.1M. */
export function countShort(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1e6) return `${(n / 1000).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)}M`;
}

/** "1.2k/5k tok $0.04": a sheep's spend against its budget in a few characters; empty when there is neither. */
export function spendShort(spent: Spend | undefined, budget: Budget | undefined): string {
  // Only a sheep held to a budget: every other line stays as it was (its tokens are in the panel and /metrics).
  if (!budget) return "";
  const s = spent ?? NO_SPEND;
  const tokens =
    budget?.outputTokens !== undefined && budget.tokens === undefined
      ? `${countShort(s.outputTokens)}/${countShort(budget.outputTokens)} out`
      : `${countShort(s.tokens)}${budget?.tokens !== undefined ? `/${countShort(budget.tokens)}` : ""} tok`;
  const cost = s.costUsd > 0 || budget?.costUsd !== undefined ? ` $${usd(s.costUsd)}${budget?.costUsd !== undefined ? `/$${usd(budget.costUsd)}` : ""}` : "";
  return `${tokens}${cost}`;
}

/** "Today (every shepherd): 700/5000 tokens, $0.00/$2.00": the day's spend or reservations against its limits. */
export function dayText(used: { tokens: number; costUsd: number }, daily: DailyBudgets): string {
  const parts = [
    ...(daily.dailyTokens !== undefined ? [`${used.tokens}/${daily.dailyTokens} tokens`] : []),
    ...(daily.dailyCostUsd !== undefined ? [`$${usd(used.costUsd)}/$${usd(daily.dailyCostUsd)}`] : []),
  ];
  return `Today's budget (spent or reserved by every shepherd): ${parts.join(", ")}.`;
}

/** The UTC day a time falls in: the key of the day's ledger. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
