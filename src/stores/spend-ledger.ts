/**
 * The day's ledger on disk: `<state dir>/budget/<YYYY-MM-DD>.json`, private (0600 in a 0700 dir),
 * written only under its lock (the state file's helper), so the shepherds of one user add to one
 * sum. What is read is bounded and checked (src/domain/budget-day.ts); a file that is not a ledger
 * (past its bound, a symlink, not JSON) is never counted as an empty day: a start is refused until
 * it is removed, so a broken file cannot loosen a budget.
 */
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { DailyBudgets, Reservation, Spend } from "../domain/budget.ts";
import {
  bounded,
  type DayLedger,
  dayLedgerOf,
  type DayTotals,
  daySpent,
  dayTotals,
  reservationProblem,
  withReport,
  withReservations,
} from "../domain/budget-day.ts";
import { ShepherdError } from "../domain/errors.ts";
import { readBounded } from "../protocol/bounded-read.ts";
import { ensurePrivateDir, writeJsonAtomic } from "../protocol/files.ts";
import type { SpendLedger } from "../ports/spend-ledger.ts";
import { withFileLock } from "./state-lock.ts";

/** A day's file at most: 2048 entries of a few hundred bytes each, with room. */
export const MAX_LEDGER_BYTES = 2 * 1024 * 1024;
/** Days of files kept; older ones are removed by the next write. */
const KEEP_DAYS = 31;
const DAY = /^(\d{4}-\d{2}-\d{2})\.json$/;

export class FileSpendLedger implements SpendLedger {
  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  fileOf(day: string): string {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
    return join(this.dir, `${day}.json`);
  }

  async reserve(day: string, wanted: { key: string; reservation: Reservation }[], daily: DailyBudgets): Promise<{ used: DayTotals; problem?: string }> {
    return this.locked<{ used: DayTotals; problem?: string }>(day, async (l) => {
      const used = dayTotals(l);
      const problem = reservationProblem(
        used,
        wanted.map((w) => w.reservation),
        daily,
      );
      if (problem) return { out: { used, problem } };
      withReservations(l, wanted, new Date(this.now()).toISOString());
      return { out: { used }, write: true };
    });
  }

  async report(day: string, key: string, total: Spend, base: Spend, open: boolean): Promise<DayTotals> {
    return this.locked(day, async (l) => {
      withReport(l, key, total, base, open, new Date(this.now()).toISOString());
      return { out: daySpent(l), write: true };
    });
  }

  async totals(day: string): Promise<DayTotals> {
    return dayTotals(await this.read(day));
  }

  private async read(day: string): Promise<DayLedger> {
    const file = this.fileOf(day);
    const r = await readBounded(file, { max: MAX_LEDGER_BYTES });
    if (!r.ok) {
      if (r.why === "missing") return { day, sheep: {} };
      throw this.unreadable(file, r.why === "too_large" ? `over ${MAX_LEDGER_BYTES} bytes` : r.why === "not_regular" ? "not a regular file" : "unreadable");
    }
    let v: unknown;
    try {
      v = JSON.parse(r.data.toString("utf8"));
    } catch {
      throw this.unreadable(file, "not JSON");
    }
    const l = dayLedgerOf(v, day, this.now());
    if (!l) throw this.unreadable(file, "not a ledger of that day");
    return l;
  }

  private unreadable(file: string, why: string): ShepherdError {
    return new ShepherdError(
      "budget_exceeded",
      `the day's spend ledger ${file} cannot be read (${why}), so no budget can be checked; remove it to count the day from zero.`,
    );
  }

  private async locked<T>(day: string, fn: (l: DayLedger) => Promise<{ out: T; write?: boolean }>): Promise<T> {
    await ensurePrivateDir(this.dir);
    const file = this.fileOf(day);
    return withFileLock(file, join(this.dir, `${day}.lock`), async () => {
      const l = await this.read(day);
      const { out, write } = await fn(l);
      if (write) {
        await writeJsonAtomic(file, bounded(l));
        await this.forgetOldDays(day);
      }
      return out;
    });
  }

  private async forgetOldDays(today: string): Promise<void> {
    const oldest = new Date(Date.parse(`${today}T00:00:00Z`) - KEEP_DAYS * 86_400_000).toISOString().slice(0, 10);
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const m = DAY.exec(name);
      if (m && m[1]! < oldest) await unlink(join(this.dir, name)).catch(() => undefined);
    }
  }
}
