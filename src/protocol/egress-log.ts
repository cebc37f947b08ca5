/**
 * A sandboxed sheep's egress log read back for `status`, `read` and the panel: the file the proxy
 * appends to in the sheep's directory and the one it rotated before (src/sandbox/egress/log.ts).
 * The sheep can write that directory, so the files are read as any file a sheep can touch (no link,
 * no FIFO, the last MiB of each at most) and every line is checked (ports/egress-report.ts).
 */
import { join } from "node:path";
import { EGRESS_LOG_NAME } from "../sandbox/policy.ts";
import { egressAttemptOf, egressReportFrom } from "../ports/egress-report.ts";
import type { EgressAttempt, EgressReport } from "../ports/types.ts";
import { openRegular } from "./bounded-read.ts";

/** The most read of each file: the proxy rotates at 1 MiB, so a whole file of its own. */
export const MAX_EGRESS_READ = 1024 * 1024;
/** A line longer than this is none of the proxy's (it writes about 2 KiB at most): skipped unparsed. */
const MAX_LINE = 8 * 1024;

/** The lines of the last `max` bytes of a file (a first line cut by the bound left out); undefined when there is no regular file. */
async function tailLines(path: string, max: number): Promise<string[] | undefined> {
  const opened = await openRegular(path);
  if (!opened.ok) return undefined;
  try {
    const size = opened.stat.size;
    const length = Math.min(size, max);
    const buf = Buffer.alloc(length);
    const { bytesRead } = await opened.file.read(buf, 0, length, size - length);
    const lines = buf.subarray(0, bytesRead).toString("utf8").split("\n");
    if (length < size) lines.shift();
    return lines;
  } catch {
    return undefined;
  } finally {
    await opened.file.close().catch(() => undefined);
  }
}

/** The egress report of the log in a sheep's directory with its last `entries` entries; undefined when it has no log there. */
export function readEgressReport(dir: string, entries: number, now = Date.now()): Promise<EgressReport | undefined> {
  return readEgressFile(join(dir, EGRESS_LOG_NAME), entries, now);
}

/** The report of a log file and the one rotated before it (`<file>.1`); undefined when neither is there. */
export async function readEgressFile(file: string, entries: number, now = Date.now()): Promise<EgressReport | undefined> {
  const [older, current] = await Promise.all([tailLines(`${file}.1`, MAX_EGRESS_READ), tailLines(file, MAX_EGRESS_READ)]);
  if (older === undefined && current === undefined) return undefined;
  const all: EgressAttempt[] = [];
  let skipped = 0;
  for (const line of [...(older ?? []), ...(current ?? [])]) {
    if (!line.trim()) continue;
    let entry: EgressAttempt | undefined;
    if (line.length <= MAX_LINE) {
      try {
        entry = egressAttemptOf(JSON.parse(line), now);
      } catch {
        entry = undefined;
      }
    }
    if (entry) all.push(entry);
    else skipped++;
  }
  return egressReportFrom(all, entries, skipped);
}
