/**
 * Fields a sheep writes (its result, status, exit report and messages) as the shepherd may keep
 * them: everything there is hostile data. A count is a finite number in a stated range or it is
 * dropped; a time is a real instant, clamped to when a sheep could have written it; a string is
 * bounded. Checked where the files are read, so no view, sum or save downstream meets a field
 * that throws (`Invalid time value`), grows without bound or adds up as text.
 */

/** Tokens a sheep may report for one prompt; more is no count of a real turn. */
export const MAX_COUNT = 1e12;
/** The cost of one prompt, in the provider's currency. */
export const MAX_COST = 1e6;
/** The earliest instant a sheep's time may name. */
export const EARLIEST_MS = Date.parse("2000-01-01T00:00:00.000Z");
/** How far past now a sheep's clock may run ahead of ours. */
export const AHEAD_MS = 24 * 3600 * 1000;
/** The longest text a time can be; anything longer is no time. */
const MAX_TIME_CHARS = 64;

/** The most of a result file read, and so the most of a result's text from any host. */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;

/** Short fields of a result or a status (a model's name, a stop reason, a dialog's title, a path). */
export const MAX_NAME_CHARS = 256;
export const MAX_PATH_CHARS = 4096;
/** One message's text (`shepherd_message`); a longer report belongs in a file the message names. */
export const MAX_MESSAGE_CHARS = 16 * 1024;
/** A sheep's own error message: a provider's error with its details, not a document. */
export const MAX_ERROR_CHARS = 8 * 1024;

/** A finite number in [0, max]; anything else (text, NaN, Infinity, negative, past max) is dropped. */
export function countOf(v: unknown, max = MAX_COUNT): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= max ? v : undefined;
}

/** The counts pi reports for a prompt (the shape of ports' Usage), each checked; undefined when none is left. */
export interface UsageCounts {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  totalTokens?: number;
  cost?: number;
}

const COUNT_KEYS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const;

export function usageOf(v: unknown): UsageCounts | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  const out: UsageCounts = {};
  for (const k of COUNT_KEYS) {
    const n = countOf(r[k]);
    if (n !== undefined) out[k] = n;
  }
  const cost = countOf(r.cost, MAX_COST);
  if (cost !== undefined) out.cost = cost;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * A time as an ISO string: a string Date can read, clamped to [2000-01-01, now + 1 day]; anything
 * else (not a string, too long, no date) is undefined.
 */
export function timeOf(v: unknown, now = Date.now()): string | undefined {
  if (typeof v !== "string" || v.length > MAX_TIME_CHARS) return undefined;
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) return undefined;
  return new Date(Math.min(Math.max(ms, EARLIEST_MS), now + AHEAD_MS)).toISOString();
}

/** A string cut to `max` characters (with an ellipsis where it was cut); anything else is undefined. */
export function stringOf(v: unknown, max: number): string | undefined {
  if (typeof v !== "string") return undefined;
  return v.length > max ? `${v.slice(0, max - 1)}…` : v;
}

/** UTF-8 bytes of a text, without encoding it when it cannot be over `max` anyway. */
export function fitsBytes(text: string, max: number): boolean {
  return text.length * 3 <= max || Buffer.byteLength(text, "utf8") <= max;
}

/** A text's first `max` UTF-8 bytes, never half a character. */
export function headBytes(text: string, max: number): string {
  if (fitsBytes(text, max)) return text;
  // A character is at most 4 bytes, so this many characters hold at least max bytes: no more is encoded.
  const head = Buffer.from(text.slice(0, max), "utf8").subarray(0, max).toString("utf8");
  return head.endsWith("\uFFFD") ? head.slice(0, -1) : head;
}
