/**
 * What a sandboxed sheep tried to reach, as `status`, `read` and `/shepherd` say it. Every field
 * came from the sheep's egress log, which the sheep can write: checked and made printable where it
 * was read (ports/egress-report.ts), so these texts only arrange it.
 */
import type { EgressAttempt, EgressReport } from "../ports/types.ts";

/** `512 B`, `1.5 kB`, `12 MB`: bytes for a reader (powers of 1000, as a line of a log is read). */
export function bytesText(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB", "PB"];
  let v = n;
  let i = -1;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v >= 100 ? Math.round(v) : Number(v.toFixed(1))} ${units[i]}`;
}

/** `3 allowed, 2 refused, 1.2 kB up, 40 kB down`: the counts of an egress log. */
export function egressCountsText(r: Pick<EgressReport, "allowed" | "refused" | "bytesUp" | "bytesDown">): string {
  return `${r.allowed} allowed, ${r.refused} refused, ${bytesText(r.bytesUp)} up, ${bytesText(r.bytesDown)} down`;
}

/** One attempt on one line: `04:10:02Z refused CONNECT 127.0.0.1:9 (not_allowed)`. */
export function egressLine(e: EgressAttempt): string {
  const why = e.reason ? ` (${e.reason})` : "";
  const to = e.address ? ` → ${e.address}` : "";
  const moved = e.verdict === "allowed" ? ` · ${bytesText(e.bytesUp)} up, ${bytesText(e.bytesDown)} down, ${e.durationMs} ms` : "";
  return `${e.time} ${e.verdict} ${e.method} ${e.target}${to}${why}${moved}`;
}

/** What `read` says of a sheep's egress log: its counts, then its last entries, one a line. */
export function egressText(who: string, r: EgressReport | undefined, sandboxed: boolean): string {
  if (!r) {
    return sandboxed
      ? `${who} is sandboxed and has tried to reach nothing yet: its egress log is empty.`
      : `${who} is not sandboxed: it has the network of its user, and no egress log.`;
  }
  const since = r.since ? ` since ${r.since}` : "";
  const head = `Egress of ${who}${since}: ${egressCountsText(r)}.`;
  const skipped = r.skipped ? `\n(${r.skipped} line${r.skipped === 1 ? "" : "s"} of the log ${r.skipped === 1 ? "is" : "are"} no entry and left out.)` : "";
  if (r.entries.length === 0) return `${head}${skipped}`;
  const n = r.entries.length;
  const total = r.allowed + r.refused;
  const which = n < total ? `The last ${n} of ${total}` : n === 1 ? "The one attempt" : `All ${n} attempts`;
  return `${head}${skipped}\n${which}, oldest first:\n${r.entries.map(egressLine).join("\n")}`;
}
