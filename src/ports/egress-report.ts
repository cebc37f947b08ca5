/**
 * A sandboxed sheep's egress log as the shepherd may use it, wherever it was read (this machine's
 * sheep-files port, or a host's agent whose answer came over the link). The log lies in the
 * sheep's own directory, which the sheep can write: every line is hostile data, so only known
 * fields pass, each of its type and within its bound, its texts printable.
 */
import { countOf, stringOf, timeOf } from "../domain/sheep-data.ts";
import { isRecord } from "../domain/guards.ts";
import { printable } from "../domain/printable.ts";
import type { EgressAttempt, EgressReport } from "./types.ts";

/** The longest `host:port` the proxy logs (it cuts a longer one to 300 characters). */
export const MAX_EGRESS_TARGET_CHARS = 300;
/** A method, a reason or an address: short words of the proxy's own. */
const MAX_WORD_CHARS = 64;
/** Bytes of one attempt: more than a tunnel moves in a sheep's life. */
const MAX_BYTES = 2 ** 50;
/** The most entries one report carries (a read asks for fewer). */
export const MAX_EGRESS_ENTRIES = 1000;

const word = (v: unknown, max = MAX_WORD_CHARS) => {
  const s = stringOf(v, max);
  return s === undefined ? undefined : printable(s).replace(/\s+/g, " ");
};

/** One entry of the log, or undefined when it is none (no time, target or verdict of the proxy's). */
export function egressAttemptOf(v: unknown, now = Date.now()): EgressAttempt | undefined {
  if (!isRecord(v)) return undefined;
  const time = timeOf(v.time, now);
  const target = word(v.target, MAX_EGRESS_TARGET_CHARS);
  if (time === undefined || !target || (v.verdict !== "allowed" && v.verdict !== "refused")) return undefined;
  const reason = word(v.reason);
  const address = word(v.address);
  return {
    time,
    target,
    method: word(v.method) ?? "?",
    verdict: v.verdict,
    ...(reason ? { reason } : {}),
    ...(address ? { address } : {}),
    bytesUp: Math.round(countOf(v.bytesUp, MAX_BYTES) ?? 0),
    bytesDown: Math.round(countOf(v.bytesDown, MAX_BYTES) ?? 0),
    durationMs: Math.round(countOf(v.durationMs, MAX_BYTES) ?? 0),
  };
}

/** The last n of a list (none for n ≤ 0: slice(-0) would give them all), at most MAX_EGRESS_ENTRIES. */
function lastOf<T>(list: T[], n: number): T[] {
  const k = Math.min(Math.floor(n), MAX_EGRESS_ENTRIES);
  return k > 0 ? list.slice(-k) : [];
}

/** Sums that stay numbers: a sum past the safe integers stops there. */
const add = (a: number, b: number) => Math.min(Number.MAX_SAFE_INTEGER, a + b);

/** The report of the entries a log holds (oldest first, each already checked), with its last `entries`. */
export function egressReportFrom(all: EgressAttempt[], entries: number, skipped: number): EgressReport {
  const r: EgressReport = { allowed: 0, refused: 0, bytesUp: 0, bytesDown: 0, entries: [], skipped };
  for (const e of all) {
    r[e.verdict]++;
    r.bytesUp = add(r.bytesUp, e.bytesUp);
    r.bytesDown = add(r.bytesDown, e.bytesDown);
  }
  if (all[0]) r.since = all[0].time;
  r.entries = lastOf(all, entries);
  return r;
}

/** A report that came from elsewhere (a host's answer): every field checked again, at most `entries` entries. */
export function egressReportOf(v: unknown, entries: number, now = Date.now()): EgressReport | undefined {
  if (!isRecord(v) || !Array.isArray(v.entries)) return undefined;
  const count = (x: unknown) => Math.round(countOf(x, Number.MAX_SAFE_INTEGER) ?? 0);
  const kept = lastOf(v.entries as unknown[], entries).map((e) => egressAttemptOf(e, now));
  const since = timeOf(v.since, now);
  return {
    allowed: count(v.allowed),
    refused: count(v.refused),
    bytesUp: count(v.bytesUp),
    bytesDown: count(v.bytesDown),
    ...(since ? { since } : {}),
    entries: kept.filter((e): e is EgressAttempt => e !== undefined),
    skipped: count(v.skipped) + kept.filter((e) => e === undefined).length,
  };
}
