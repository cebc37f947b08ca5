/**
 * The tallies of state.json read back: each shepherd's spend beyond its records (ports/store.ts).
 * A tally is summed into the totals a person sees, so one that is not exactly of its shape (a
 * count that is text, negative, past its bound, a day that is no day, an owner twice) is dropped
 * whole rather than believed in part; at most MAX_TALLIES_KEPT are read.
 */
import { MAX_TALLIES_KEPT, MAX_TALLY_COST } from "../domain/bounds.ts";
import { isRecord } from "../domain/guards.ts";
import { countOf } from "../domain/sheep-data.ts";
import type { TallyRecord, UsageSum } from "../ports/store.ts";

const OWNER = /^[\x21-\x7e]{1,256}$/;
const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
/** Today and yesterday: more days than that in one tally is not a tally. */
const MAX_DAYS = 2;

function sumOf(v: Record<string, unknown>): UsageSum | undefined {
  const input = countOf(v.input);
  const output = countOf(v.output);
  const cost = countOf(v.cost, MAX_TALLY_COST);
  const prompts = countOf(v.prompts);
  if (input === undefined || output === undefined || cost === undefined || prompts === undefined || !Number.isInteger(prompts)) return undefined;
  if (!Number.isInteger(input) || !Number.isInteger(output)) return undefined;
  return { input, output, cost, prompts };
}

export function tallyOf(v: unknown): TallyRecord | undefined {
  if (!isRecord(v) || typeof v.owner !== "string" || !OWNER.test(v.owner) || !Array.isArray(v.days) || v.days.length > MAX_DAYS) return undefined;
  const all = sumOf(v);
  if (!all) return undefined;
  const days: TallyRecord["days"] = [];
  for (const d of v.days) {
    if (!isRecord(d) || typeof d.day !== "string" || !DAY.test(d.day) || Number.isNaN(Date.parse(d.day))) return undefined;
    if (days.some((x) => x.day === d.day)) return undefined;
    const sum = sumOf(d);
    // A day holds part of the whole: one that holds more was not written by a shepherd.
    if (!sum || sum.input > all.input || sum.output > all.output || sum.cost > all.cost || sum.prompts > all.prompts) return undefined;
    days.push({ day: d.day, ...sum });
  }
  return { owner: v.owner, ...all, days };
}

/** The tallies a file holds that are of their shape, one per owner (a second of the same owner is dropped: it would count twice). */
export function checkTallies(v: unknown): { tallies: TallyRecord[]; rejected: number } {
  if (v === undefined) return { tallies: [], rejected: 0 };
  if (!Array.isArray(v)) return { tallies: [], rejected: 1 };
  const tallies: TallyRecord[] = [];
  let rejected = 0;
  const owners = new Set<string>();
  for (const raw of v.slice(-MAX_TALLIES_KEPT)) {
    const t = tallyOf(raw);
    if (!t || owners.has(t.owner)) {
      rejected++;
      continue;
    }
    owners.add(t.owner);
    tallies.push(t);
  }
  return { tallies, rejected: rejected + Math.max(0, v.length - MAX_TALLIES_KEPT) };
}
