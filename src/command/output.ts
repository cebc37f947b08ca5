/**
 * What /shepherd leaves in pi's transcript: the command typed and what it answered, kept in the
 * session as a display-only entry (never sent to the model) and drawn again on resume. The entry
 * is read back from a session file, which may be damaged or forged: only its known shape is used.
 */
import { isRecord } from "../domain/guards.ts";
import { printable } from "../domain/printable.ts";
import type { Paint } from "../edge/render-text.ts";
import type { Notice } from "./run.ts";

export const OUTPUT_ENTRY = "pi-shepherd-output";

export interface OutputEntry {
  /** The words after /shepherd, as typed. */
  args: string;
  notices: Notice[];
  /** Names this answer's unredacted text, held in this pi's memory only until it is drawn once. */
  reveal?: string;
}

/**
 * A panel URL's token: a key to the herd, so never in the session file (0644 in directories
 * 0755, read by anything of the user's). The file keeps the URL with the token replaced.
 */
const TOKEN_IN_URL = /#token=[A-Za-z0-9_-]+/g;
export const REDACTED_TOKEN = "#token=… (shown once; /shepherd panel url shows it again)";
const REVEAL_ID = /^[0-9a-f]{32}$/;

export function redactSecrets(text: string): string {
  return text.replace(TOKEN_IN_URL, REDACTED_TOKEN);
}

/** Lines shown before Ctrl+O expands an answer. */
const COLLAPSED_LINES = 40;
/** The most kept of one answer: the session file is no place for a pane's whole scrollback. */
const MAX_TEXT = 100_000;

const LEVELS = new Set(["info", "warning", "error"]);

/**
 * Where an answer goes: an entry only where pi's own TUI draws entries (pi 1.6 says `ctx.mode`;
 * its RPC clients read notifications), a notification where there is any other UI, else the console.
 */
export function outputRoute(pi: { entryRenderers: boolean }, ctx: { mode?: string; hasUI: boolean }): "entry" | "notify" | "console" {
  if (pi.entryRenderers && ctx.mode === "tui") return "entry";
  return ctx.hasUI ? "notify" : "console";
}

/** An answer as kept in the session file: cut, and without a secret (unless `keepSecrets`: the copy held in memory to draw once). */
export function outputEntry(args: string, notices: Notice[], keepSecrets = false): OutputEntry {
  const kept = (text: string) => (keepSecrets ? text : redactSecrets(text));
  return {
    args,
    notices: notices.map((n) => ({ level: n.level, text: kept(n.text.length > MAX_TEXT ? `${n.text.slice(0, MAX_TEXT)}\n… (cut)` : n.text) })),
  };
}

export function outputEntryOf(data: unknown): OutputEntry | undefined {
  if (!isRecord(data) || typeof data.args !== "string" || !Array.isArray(data.notices)) return undefined;
  const notices = data.notices.filter((n): n is Notice => isRecord(n) && typeof n.text === "string" && LEVELS.has(n.level as string));
  return { args: data.args, notices, ...(typeof data.reveal === "string" && REVEAL_ID.test(data.reveal) ? { reveal: data.reveal } : {}) };
}

export function outputText(entry: OutputEntry, expanded: boolean, t: Paint): string {
  const lines = [t.fg("accent", t.bold(printable(`/shepherd ${entry.args}`.trimEnd()).replace(/\n/g, " ")))];
  for (const n of entry.notices) {
    const color = n.level === "error" ? "error" : n.level === "warning" ? "warning" : undefined;
    for (const line of printable(n.text).split("\n")) lines.push(color ? t.fg(color, line) : line);
  }
  if (expanded || lines.length <= COLLAPSED_LINES + 1) return lines.join("\n");
  const more = lines.length - 1 - COLLAPSED_LINES;
  // A read's answer is at its end: its heading, then the last lines of the conversation or screen.
  if (/^\s*read\b/.test(entry.args)) {
    return [lines[0]!, lines[1]!, t.fg("dim", `… ${more} earlier lines (Ctrl+O shows all)`), ...lines.slice(-(COLLAPSED_LINES - 1))].join("\n");
  }
  return [...lines.slice(0, COLLAPSED_LINES + 1), t.fg("dim", `… ${more} more lines (Ctrl+O shows all)`)].join("\n");
}
