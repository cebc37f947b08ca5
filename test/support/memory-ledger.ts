import type { DailyBudgets, Reservation, Spend } from "../../src/domain/budget.ts";
import { type DayLedger, type DayTotals, daySpent, dayTotals, reservationProblem, withReport, withReservations } from "../../src/domain/budget-day.ts";
import type { SpendLedger } from "../../src/ports/spend-ledger.ts";

/** The day's spend ledger's rules (src/domain/budget-day.ts) in memory: one instance stands for the user's shared file. */
export class MemoryLedger implements SpendLedger {
  readonly days = new Map<string, DayLedger>();

  private day(day: string): DayLedger {
    let l = this.days.get(day);
    if (!l) {
      l = { day, sheep: {} };
      this.days.set(day, l);
    }
    return l;
  }

  async reserve(day: string, wanted: { key: string; reservation: Reservation }[], daily: DailyBudgets): Promise<{ used: DayTotals; problem?: string }> {
    const l = this.day(day);
    const used = dayTotals(l);
    const problem = reservationProblem(
      used,
      wanted.map((w) => w.reservation),
      daily,
    );
    if (problem) return { used, problem };
    withReservations(l, wanted, new Date().toISOString());
    return { used };
  }

  async report(day: string, key: string, total: Spend, base: Spend, open: boolean): Promise<DayTotals> {
    const l = this.day(day);
    withReport(l, key, total, base, open, new Date().toISOString());
    return daySpent(l);
  }

  async totals(day: string): Promise<DayTotals> {
    return dayTotals(this.day(day));
  }
}
