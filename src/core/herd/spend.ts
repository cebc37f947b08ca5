/**
 * The herd's spend (issue 35): reservations before a start, each sheep's running total as its
 * results report it, the day's ledger every shepherd of the user shares, and the warning and limit
 * events. The sheep stops its own turn at its budget; here the shepherd keeps the numbers.
 */
import {
  atWarningLine,
  type Budget,
  type DailyBudgets,
  DEFAULT_WARN_AT,
  dayOf,
  heldBudget,
  maxSpend,
  NO_SPEND,
  type Spend,
  reservationOf,
  spendText,
} from "../../domain/budget.ts";
import type { DayTotals } from "../../domain/budget-day.ts";
import { errorText, ShepherdError } from "../../domain/errors.ts";
import { newId } from "../../domain/ids.ts";
import type { AuditInput } from "../../ports/audit.ts";
import type { SpendLedger } from "../../ports/spend-ledger.ts";
import type { AgentRecord, HeldBudget } from "../../ports/types.ts";
import type { Clock } from "./clock.ts";

export interface SpendDeps {
  ledger?: SpendLedger;
  daily?: DailyBudgets;
  clock: Clock;
  audit: (e: AuditInput) => void;
  warn?: (message: string) => void;
}

/** The day as the views show it: what every shepherd of the user spent or reserved, against the limits. */
export interface DaySpend {
  day: string;
  used: DayTotals;
  daily: DailyBudgets;
}

export class HerdSpend {
  /** Ledger writes one after another, so a later total never lands before an earlier one. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Days whose warning / limit event went out from this shepherd. */
  private readonly dayTold = new Set<string>();

  constructor(private readonly d: SpendDeps) {}

  private get warnAt(): number {
    return this.d.daily?.warnAt ?? DEFAULT_WARN_AT;
  }

  private today(): string {
    return dayOf(this.d.clock.now());
  }

  /**
   * Reserves, for each sheep about to start, the budget it will be held to (its own, or its share of
   * the day's); all fit what is left of the day, or none is written and the start is refused
   * with [budget_exceeded] before any sheep starts.
   */
  async reserve(own: (Budget | undefined)[]): Promise<HeldBudget[]> {
    const daily = this.d.daily;
    const held = own.map((b) => {
      const budget = heldBudget(b, daily);
      return { key: newId("reservation") as string, ...(budget ? { budget } : {}) };
    });
    const limited = daily !== undefined && (daily.dailyTokens !== undefined || daily.dailyCostUsd !== undefined);
    if (!limited || !this.d.ledger) return held;
    const wanted = held.map((h) => ({ key: h.key, reservation: reservationOf(h.budget, daily) }));
    const { used, problem } = await this.d.ledger.reserve(this.today(), wanted, daily);
    if (problem) {
      const reserved = wanted.reduce((a, w) => ({ tokens: a.tokens + w.reservation.tokens, costUsd: a.costUsd + w.reservation.costUsd }), {
        tokens: 0,
        costUsd: 0,
      });
      this.d.audit({ event: "budget-exceeded", scope: "day", budget: limitsOf(daily), spent: used, reserved });
      throw new ShepherdError(
        "budget_exceeded",
        `the herd's daily budget does not hold this: ${problem}. No sheep was started; try a smaller "budget", or raise "budgets" in your settings.`,
      );
    }
    return held;
  }

  /** A start that failed lets its reservation go: it spent nothing. */
  release(held: HeldBudget | undefined): void {
    // Only a held budget was ever reserved in the ledger.
    if (!held?.budget || !this.d.ledger) return;
    const ledger = this.d.ledger;
    const day = this.today();
    this.queue(() => ledger.report(day, held.key, NO_SPEND, NO_SPEND, false));
  }

  /**
   * A sheep's running total as a result reported it: kept on its record (the larger of the two, as
   * reports may come out of order), told to the day's ledger, and its warning line checked.
   */
  note(rec: AgentRecord, total: Spend | undefined): void {
    if (!total) return;
    const before = rec.spent ?? NO_SPEND;
    const after = maxSpend(before, total);
    const changed = after.tokens !== before.tokens || after.outputTokens !== before.outputTokens || after.costUsd !== before.costUsd;
    rec.spent = after;
    if (!rec.budgetWarned && atWarningLine(rec.budget, after, this.warnAt)) {
      rec.budgetWarned = true;
      this.d.audit({
        event: "budget-warning",
        scope: "sheep",
        agentId: rec.agentId,
        label: rec.label,
        ...(rec.budget ? { budget: rec.budget } : {}),
        spent: after,
      });
    }
    if (changed || rec.ledgerDay === undefined) this.report(rec, before, true);
  }

  /** The sheep's turn was stopped at its budget (the sheep said so in its result). */
  exceeded(rec: AgentRecord): void {
    this.d.audit({
      event: "budget-exceeded",
      scope: "sheep",
      agentId: rec.agentId,
      label: rec.label,
      ...(rec.budget ? { budget: rec.budget } : {}),
      spent: rec.spent ?? NO_SPEND,
    });
  }

  /** A closed sheep: its spend stays counted, its reservation is let go. */
  closed(rec: AgentRecord): void {
    // Nothing spent, nothing reserved, never in a ledger: nothing to write.
    if (rec.spent === undefined && rec.ledgerDay === undefined && rec.budget === undefined) return;
    this.report(rec, rec.spent ?? NO_SPEND, false);
  }

  private report(rec: AgentRecord, before: Spend, open: boolean): void {
    const ledger = this.d.ledger;
    if (!ledger) return;
    const day = this.today();
    // A sheep reported on a new day counts there from what the earlier days already counted of it.
    if (rec.ledgerDay !== day) {
      rec.ledgerBase = rec.ledgerDay === undefined ? NO_SPEND : before;
      rec.ledgerDay = day;
    }
    rec.ledgerKey ??= rec.agentId;
    const key = rec.ledgerKey;
    const total = rec.spent ?? NO_SPEND;
    const base = rec.ledgerBase ?? NO_SPEND;
    this.queue(async () => this.dayLine(day, await ledger.report(day, key, total, base, open)));
  }

  /** The day's warning and limit events, once each per day from this shepherd: of what was spent, not reserved. */
  private dayLine(day: string, used: DayTotals): void {
    const daily = this.d.daily;
    if (!daily) return;
    const share = Math.max(
      daily.dailyTokens !== undefined ? used.tokens / daily.dailyTokens : 0,
      daily.dailyCostUsd !== undefined ? used.costUsd / daily.dailyCostUsd : 0,
    );
    const tell = (kind: "budget-warning" | "budget-exceeded") => {
      if (this.dayTold.has(`${day}:${kind}`)) return;
      this.dayTold.add(`${day}:${kind}`);
      this.d.audit({ event: kind, scope: "day", budget: limitsOf(daily), spent: used });
    };
    if (share >= this.warnAt) tell("budget-warning");
    if (share >= 1) tell("budget-exceeded");
  }

  private queue(write: () => Promise<unknown>): void {
    this.chain = this.chain.then(write).catch((e: unknown) => this.d.warn?.(`pi-shepherd: the day's spend could not be written: ${errorText(e)}`));
  }

  /** Every ledger write asked for so far has ended (tests, quit). */
  async flushed(): Promise<void> {
    await this.chain;
  }

  /** The day's spend of every shepherd of the user against the `budgets` setting; undefined without one. */
  async day(): Promise<DaySpend | undefined> {
    const daily = this.d.daily;
    // No daily limit (the default `budgets: {}`): there is no day's budget to show.
    if (!daily || !this.d.ledger || (daily.dailyTokens === undefined && daily.dailyCostUsd === undefined)) return undefined;
    const day = this.today();
    return { day, used: await this.d.ledger.totals(day), daily };
  }
}

function limitsOf(d: DailyBudgets): DailyBudgets {
  return {
    ...(d.dailyTokens !== undefined ? { dailyTokens: d.dailyTokens } : {}),
    ...(d.dailyCostUsd !== undefined ? { dailyCostUsd: d.dailyCostUsd } : {}),
  };
}

/** A sheep's spend against its budget, in words. */
export function sheepSpendText(rec: Pick<AgentRecord, "spent" | "budget">): string {
  return spendText(rec.spent ?? NO_SPEND, rec.budget);
}
