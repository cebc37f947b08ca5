import { constants } from "node:os";
import type { ExitStatus } from "../../ports/runtime.ts";

export const MARK = "@pi_shepherd_agent";

/** One pane of the server as list-panes shows it. */
export interface PaneRow {
  mark: string;
  /** Its program ended and remain-on-exit kept the pane. */
  dead: boolean;
  /** How it ended; undefined while tmux has not collected it yet. */
  exit?: ExitStatus;
  /** The tmux server's pid (the same on every row). */
  serverPid: number;
}

/**
 * Every pane of the server with its mark and, for a dead one, how its program ended, in one
 * tmux call. Tab-separated: a mark set by someone else may hold spaces, never a tab we add.
 */
export const PANE_TABLE_ARGS = [
  "list-panes",
  "-a",
  "-F",
  ["#{pane_id}", "#{pid}", "#{pane_dead}", "#{pane_dead_status}", "#{pane_dead_signal}", `#{${MARK}}`].join("\t"),
] as const;

export function parsePaneTable(out: string): Map<string, PaneRow> {
  const rows = new Map<string, PaneRow>();
  for (const line of out.split("\n")) {
    const [id, pid, dead, status, signal, ...mark] = line.split("\t");
    if (!id || mark.length === 0) continue;
    const row: PaneRow = { mark: mark.join("\t").trim(), dead: dead === "1", serverPid: Number(pid) };
    const exit = exitOf(status ?? "", signal ?? "");
    if (row.dead && exit) row.exit = exit;
    rows.set(id, row);
  }
  return rows;
}

/**
 * tmux gives the status of a process that exited, or the signal that killed it: its number on
 * Linux, its name ("KILL") where the C library can name it.
 */
function exitOf(status: string, signal: string): ExitStatus | undefined {
  if (/^\d+$/.test(status)) return { code: Number(status), signal: null };
  if (/^\d+$/.test(signal)) return { code: null, signal: signalName(Number(signal)) };
  if (/^[A-Za-z][A-Za-z0-9+]{0,15}$/.test(signal)) return { code: null, signal: signal.toUpperCase().replace(/^(?!SIG)/, "SIG") };
  return undefined;
}

function signalName(n: number): string {
  const found = Object.entries(constants.signals).find(([, v]) => v === n);
  return found ? found[0] : `signal ${n}`;
}

/**
 * #{pane_dead_signal} came with tmux 3.3: an older tmux cannot name the signal that killed a
 * pane's program. An unreadable version (a build from git) is taken to be new.
 */
export function reportsExit(versionLine: string): boolean {
  const m = /(\d+)\.(\d+)/.exec(versionLine);
  if (!m) return true;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 3 || (major === 3 && minor >= 3);
}
