/**
 * The day's spend of the herd, shared by every shepherd of the user (issue 35): reservations made
 * before a start, and each sheep's running total as it reports. One writer at a time; every call
 * reads what the others wrote.
 */
import type { DailyBudgets, Reservation, Spend } from "../domain/budget.ts";
import type { DayTotals } from "../domain/budget-day.ts";

export interface SpendLedger {
  /**
   * Under the day's lock: the reservations are written, all of them, only when they fit what is
   * left of the day; otherwise nothing is written and `problem` says why, with the numbers.
   */
  reserve(day: string, wanted: { key: string; reservation: Reservation }[], daily: DailyBudgets): Promise<{ used: DayTotals; problem?: string }>;
  /** A sheep's running total; `open: false` lets its reservation go (it closed). Returns what the day's sheep spent after it, reservations left out. */
  report(day: string, key: string, total: Spend, base: Spend, open: boolean): Promise<DayTotals>;
  totals(day: string): Promise<DayTotals>;
}
