/**
 * A remote pane's terminal over its host's link: the agent there pushes what the pane's program
 * writes as events, each chunk base64 (bytes, not text: a chunk may end inside a character) and
 * capped in bytes, and says when a watch ended by itself. Like every line from a host, an event is
 * checked and bounded on arrival; one that is no such event is dropped.
 */
import { printable } from "../../domain/printable.ts";
import { MAX_TERMINAL_KEYS } from "../../domain/bounds.ts";

/** The most of a pane's output one event carries; a larger read is cut into several. */
export const MAX_TERM_CHUNK_BYTES = 32 * 1024;
/** The most watches one agent holds at once (the panel opens at most 32 terminals in all). */
export const MAX_REMOTE_WATCHES = 32;
/** The most bytes of keys one call carries: MAX_TERMINAL_KEYS characters of at most 4 bytes. */
export const MAX_TERM_KEY_BYTES = MAX_TERMINAL_KEYS * 4;
/** What the agent may leave unsent to the shepherd before it ends a watch rather than buffer more. */
export const MAX_TERM_BACKLOG_BYTES = 8 * 1024 * 1024;
const MAX_WHY_CHARS = 300;
const MAX_DATA_CHARS = Math.ceil(MAX_TERM_CHUNK_BYTES / 3) * 4;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export type TermEvent = { ev: "term-output"; watch: number; data: Buffer } | { ev: "term-end"; watch: number; why: string };

/** A watch's id as the shepherd chose it: one the agent keeps while the link lasts. */
export const isWatchId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0 && (v as number) <= 0x7fffffff;

/** The event a line carries, checked; undefined when it is none. */
export function termEventOf(m: Record<string, unknown>): TermEvent | undefined {
  if (!isWatchId(m.watch)) return undefined;
  if (m.ev === "term-output") {
    const { data } = m;
    if (typeof data !== "string" || data.length === 0 || data.length > MAX_DATA_CHARS || data.length % 4 !== 0 || !BASE64.test(data)) return undefined;
    return { ev: "term-output", watch: m.watch, data: Buffer.from(data, "base64") };
  }
  if (m.ev === "term-end") {
    const { why } = m;
    if (typeof why !== "string" || why.length > MAX_WHY_CHARS) return undefined;
    return { ev: "term-end", watch: m.watch, why: printable(why) };
  }
  return undefined;
}

/** The lines that carry `chunk` of a watch's output: base64, each at most MAX_TERM_CHUNK_BYTES of it. */
export function outputLines(watch: number, chunk: Buffer): string[] {
  const lines: string[] = [];
  for (let at = 0; at < chunk.length; at += MAX_TERM_CHUNK_BYTES) {
    const data = chunk.subarray(at, at + MAX_TERM_CHUNK_BYTES).toString("base64");
    lines.push(`${JSON.stringify({ ev: "term-output", watch, data })}\n`);
  }
  return lines;
}

export function endLine(watch: number, why: string): string {
  return `${JSON.stringify({ ev: "term-end", watch, why: why.slice(0, MAX_WHY_CHARS) })}\n`;
}
