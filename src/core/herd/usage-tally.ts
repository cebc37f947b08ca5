/**
 * What the herd spent, counted once per settled prompt and never taken back: the records forget
 * closed sheep (MAX_CLOSED_KEPT) and old prompts (MAX_SETTLED_KEPT), so a sum over the records
 * would shrink when they do. A shepherd counts from the records it attached to and every prompt
 * that settles while it runs; today is the local day of the prompt's finish.
 */
import { countOf, MAX_COST } from "../../domain/sheep-data.ts";
import type { PromptRecord } from "../../ports/types.ts";

export interface UsageSum {
  input: number;
  output: number;
  cost: number;
  /** Settled prompts counted. */
  prompts: number;
}

export interface UsageTotals extends UsageSum {
  /** The same for prompts finished today (the shepherd's local day), with that day as YYYY-MM-DD. */
  today: UsageSum & { day: string };
}

const empty = (): UsageSum => ({ input: 0, output: 0, cost: 0, prompts: 0 });

/** The local calendar day of an instant, YYYY-MM-DD. */
export function localDay(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

export class UsageTally {
  private readonly all = empty();
  /** Sums by local day; only today's and yesterday's are kept (a shepherd running past midnight). */
  private readonly days = new Map<string, UsageSum>();
  /** Prompts counted that the records still hold: a prompt forgotten by them never comes back. */
  private counted = new Set<string>();

  /** Counts every settled prompt not counted yet; `prompts` is every prompt the records hold now. */
  see(prompts: Iterable<PromptRecord>, now: number): void {
    const held = new Set<string>();
    for (const p of prompts) {
      held.add(p.promptId);
      if (!p.settled || this.counted.has(p.promptId)) continue;
      this.counted.add(p.promptId);
      const u = p.settled.usage;
      // Checked where they were read; a sum still takes numbers only, so it never turns to text.
      const input = countOf(u?.input) ?? 0;
      const output = countOf(u?.output) ?? 0;
      const cost = countOf(u?.cost, MAX_COST) ?? 0;
      const finished = p.finishedAt !== undefined ? Date.parse(p.finishedAt) : Number.NaN;
      const day = localDay(Number.isFinite(finished) ? finished : now);
      for (const sum of [this.all, this.dayOf(day)]) {
        sum.input += input;
        sum.output += output;
        sum.cost += cost;
        sum.prompts++;
      }
    }
    // Ids the records let go of are not remembered: they cannot settle (or be counted) again.
    if (held.size < this.counted.size) this.counted = new Set([...this.counted].filter((id) => held.has(id)));
    this.prune(now);
  }

  totals(now: number): UsageTotals {
    const day = localDay(now);
    return { ...this.all, today: { ...(this.days.get(day) ?? empty()), day } };
  }

  private dayOf(day: string): UsageSum {
    let sum = this.days.get(day);
    if (!sum) {
      sum = empty();
      this.days.set(day, sum);
    }
    return sum;
  }

  private prune(now: number): void {
    const keep = new Set([localDay(now), localDay(now - 24 * 3600 * 1000)]);
    for (const day of this.days.keys()) if (!keep.has(day)) this.days.delete(day);
  }
}
