/**
 * What the herd spent, counted once per settled prompt and never taken back: the records forget
 * closed sheep (MAX_CLOSED_KEPT) and old prompts (MAX_SETTLED_KEPT), and the state file bounds
 * them across every shepherd, so a sum over the records would shrink when they do. The tally is
 * written with the records it counted (`kept()`, state.json's tallies: every settled prompt written
 * beside it is in it) and taken over after a reload or a restart (`absorb`), with the prompts it
 * already counted (`already`), so nothing counts twice. Today is the local day of the prompt's finish.
 */
import { MAX_TALLY_COST } from "../../domain/bounds.ts";
import { countOf, MAX_COST } from "../../domain/sheep-data.ts";
import type { StoredState, TallyRecord, UsageSum } from "../../ports/store.ts";
import type { PromptRecord } from "../../ports/types.ts";

export type { UsageSum } from "../../ports/store.ts";

export interface UsageTotals extends UsageSum {
  /** The same for prompts finished today (the shepherd's local day), with that day as YYYY-MM-DD. */
  today: UsageSum & { day: string };
}

const empty = (): UsageSum => ({ input: 0, output: 0, cost: 0, prompts: 0 });
const DAY_MS = 24 * 3600 * 1000;

/** The local calendar day of an instant, YYYY-MM-DD. */
export function localDay(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

function add(to: UsageSum, from: UsageSum): void {
  to.input += from.input;
  to.output += from.output;
  to.cost += from.cost;
  to.prompts += from.prompts;
}

/** A stored sum's numbers, each checked again: the core believes no count it did not make. */
function sumOf(v: UsageSum): UsageSum | undefined {
  const s = { input: countOf(v.input), output: countOf(v.output), cost: countOf(v.cost, MAX_TALLY_COST), prompts: countOf(v.prompts) };
  return s.input === undefined || s.output === undefined || s.cost === undefined || s.prompts === undefined ? undefined : (s as UsageSum);
}

export class UsageTally {
  private readonly all = empty();
  /** Sums by local day; only today's and yesterday's are kept (a shepherd running past midnight). */
  private readonly days = new Map<string, UsageSum>();
  /** Prompts counted that the records still hold: a prompt forgotten by them never comes back. */
  private counted = new Set<string>();
  /** Owners whose stored tallies were taken over: never twice, and dropped from the file under their names. */
  private readonly taken = new Set<string>();
  /** Set once the stored tallies were taken over (attach): until then a write leaves this shepherd's stored tally alone. */
  private ready = false;

  /**
   * Takes over the stored tallies of the owners whose records this shepherd takes (its own before a
   * reload, a shepherd's that no longer runs), once each; from then on `stored` carries this tally.
   * Returns the owners taken now: their records' settled prompts are counted already (`already`).
   */
  take(tallies: readonly TallyRecord[], ours: (owner: string) => boolean, now: number): Set<string> {
    const fresh = new Set<string>();
    for (const t of tallies) {
      if (!ours(t.owner) || this.taken.has(t.owner)) continue;
      this.taken.add(t.owner);
      fresh.add(t.owner);
      this.absorb(t, now);
    }
    this.ready = true;
    return fresh;
  }

  /** What a write of `owner`'s records carries: its tally once taken over, and the owners whose tallies it took. */
  stored(owner: string, now: number): Pick<StoredState, "tallies" | "forgottenTallies"> {
    return {
      ...(this.ready ? { tallies: [{ owner, ...this.kept(now) }] } : {}),
      forgottenTallies: [...this.taken].filter((o) => o !== owner),
    };
  }

  /** Counts every settled prompt not counted yet; `prompts` is every prompt the records hold now. */
  see(prompts: Iterable<PromptRecord>, now: number): void {
    const held = new Set<string>();
    for (const p of prompts) {
      held.add(p.promptId);
      this.count(p, now);
    }
    // Ids the records let go of are not remembered: they cannot settle (or be counted) again.
    if (held.size < this.counted.size || [...this.counted].some((id) => !held.has(id))) this.counted = new Set([...this.counted].filter((id) => held.has(id)));
    this.prune(now);
  }

  /** Counts settled prompts the records will not hold (a dead shepherd's closed sheep let go of), once. */
  countGone(prompts: Iterable<PromptRecord>, now: number): void {
    for (const p of prompts) if (this.count(p, now)) this.counted.delete(p.promptId);
    this.prune(now);
  }

  private count(p: PromptRecord, now: number): boolean {
    if (!p.settled || this.counted.has(p.promptId)) return false;
    this.counted.add(p.promptId);
    const u = p.settled.usage;
    // Checked where they were read; a sum still takes numbers only, so it never turns to text.
    const sum = { input: countOf(u?.input) ?? 0, output: countOf(u?.output) ?? 0, cost: countOf(u?.cost, MAX_COST) ?? 0, prompts: 1 };
    const finished = p.finishedAt !== undefined ? Date.parse(p.finishedAt) : Number.NaN;
    add(this.all, sum);
    add(this.dayOf(localDay(Number.isFinite(finished) ? finished : now)), sum);
    return true;
  }

  /** Settled prompts a tally taken over already counted (they were written beside it): not counted again. */
  already(prompts: Iterable<PromptRecord>): void {
    for (const p of prompts) if (p.settled) this.counted.add(p.promptId);
  }

  /** Takes over a stored tally (this shepherd's before a reload, or one of a shepherd whose records it adopted). */
  absorb(t: Pick<TallyRecord, keyof UsageSum | "days">, now: number): void {
    const all = sumOf(t);
    if (!all) return;
    const keep = this.keptDays(now);
    const days: [string, UsageSum][] = [];
    for (const d of Array.isArray(t.days) ? t.days : []) {
      const sum = sumOf(d);
      if (!sum || typeof d.day !== "string" || !keep.has(d.day)) continue;
      days.push([d.day, sum]);
    }
    add(this.all, all);
    for (const [day, sum] of days) add(this.dayOf(day), sum);
  }

  /** What state.json keeps for this shepherd: every prompt it counted, by day for today and yesterday. */
  kept(now: number): Omit<TallyRecord, "owner"> {
    this.prune(now);
    return { ...this.all, days: [...this.days].map(([day, sum]) => ({ day, ...sum })) };
  }

  totals(now: number): UsageTotals {
    this.prune(now);
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

  private keptDays(now: number): Set<string> {
    return new Set([localDay(now), localDay(now - DAY_MS)]);
  }

  private prune(now: number): void {
    const keep = this.keptDays(now);
    for (const day of this.days.keys()) if (!keep.has(day)) this.days.delete(day);
  }
}
