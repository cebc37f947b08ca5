/**
 * The texts state.json keeps (results, errors, a delegation's tasks), bounded in bytes: each at
 * most MAX_STORED_TEXT_BYTES, all of them together at most MAX_STORED_TEXTS_BYTES, the oldest
 * received cut to CUT_TEXT_BYTES first. A cut text says how long it was and where it is whole:
 * the sheep's session file, which action "read" shows. Results of 16 MiB each had every save fail
 * (`Invalid string length`) past a few dozen, so no sheep's record was written at all; bounded,
 * the file is written whatever one sheep answered. The records in memory stay whole: a `wait`
 * still returns the exact answer; only the copy on disk is cut.
 */
import { headBytes } from "../domain/sheep-data.ts";
import type { DelegationRecord, PromptRecord } from "../ports/types.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
export const MAX_STORED_TEXT_BYTES = 1 * MiB;
export const MAX_STORED_TEXTS_BYTES = 16 * MiB;
export const CUT_TEXT_BYTES = 4 * KiB;

/** One text of one record: where it is, how big, how old, and where it is whole. */
interface Place {
  at: string;
  /** Bytes of the text whole, and as it is stored now. */
  full: number;
  bytes: number;
  /** The text without a note of an earlier cut. */
  body: string;
  get: () => string;
  set: (text: string) => void;
  where: string;
}

function cutText(text: string, full: number, max: number, where: string): string {
  return `${headBytes(text, max)}\n… [cut in state.json at ${max} of its ${full} bytes; ${where}]`;
}

const NOTE = /\n… \[cut in state\.json at \d+ of its (\d+) bytes; [^\n]*\]$/;

/** A text and its whole size; one cut before is its body and the size its note names. */
function uncut(text: string): { body: string; full: number } {
  const m = text.length < MAX_STORED_TEXT_BYTES * 2 ? NOTE.exec(text.slice(-600)) : null;
  if (!m) return { body: text, full: Buffer.byteLength(text, "utf8") };
  return { body: text.slice(0, text.length - m[0].length), full: Number(m[1]) };
}

/**
 * Copies of the records whose texts are within the bounds (a record with nothing to cut is the same
 * object). Never changes the records it is given.
 */
export function boundedTexts(
  prompts: readonly PromptRecord[],
  delegations: readonly DelegationRecord[],
): { prompts: PromptRecord[]; delegations: DelegationRecord[] } {
  const places: Place[] = [];
  const outPrompts = prompts.map((p) => {
    const s = p.settled;
    if (!s || (s.text === undefined && s.error === undefined && s.evidenceError === undefined)) return p;
    const copy: PromptRecord = { ...p, settled: { ...s } };
    const settled = copy.settled!;
    const where = `the whole answer is in the sheep's session file${s.sessionPath ? ` ${s.sessionPath}` : ""}: action "read" of ${p.agentId} shows it`;
    for (const key of ["text", "error", "evidenceError"] as const) {
      if (settled[key] === undefined) continue;
      places.push({ at: p.submittedAt, full: 0, bytes: 0, body: "", get: () => settled[key]!, set: (t) => (settled[key] = t), where });
    }
    return copy;
  });
  const outDelegations = delegations.map((d) => {
    const copy: DelegationRecord = { ...d, items: d.items.map((i) => ({ ...i })) };
    for (const item of copy.items) {
      const where = item.agentId ? `the whole text is in the session file of ${item.agentId}: action "read" shows it` : "the whole text is not kept";
      for (const key of ["text", "error", "task", "evidenceError"] as const) {
        if (item[key] === undefined) continue;
        places.push({ at: d.createdAt, full: 0, bytes: 0, body: "", get: () => item[key]!, set: (t) => (item[key] = t), where });
      }
    }
    return copy;
  });
  let total = 0;
  for (const place of places) {
    // A text cut by an earlier save (read back from the file) keeps its note: cut again from its body, never noted twice.
    const { body, full } = uncut(place.get());
    place.full = full;
    place.body = body;
    if (Buffer.byteLength(body, "utf8") > MAX_STORED_TEXT_BYTES) place.set(cutText(body, full, MAX_STORED_TEXT_BYTES, place.where));
    place.bytes = Buffer.byteLength(place.get(), "utf8");
    total += place.bytes;
  }
  if (total > MAX_STORED_TEXTS_BYTES) {
    // The oldest first: the newest answers are the ones a reloaded shepherd is most likely asked about.
    for (const place of [...places].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
      if (total <= MAX_STORED_TEXTS_BYTES) break;
      if (place.bytes <= CUT_TEXT_BYTES * 2) continue;
      place.set(cutText(place.body, place.full, CUT_TEXT_BYTES, place.where));
      const bytes = Buffer.byteLength(place.get(), "utf8");
      total -= place.bytes - bytes;
      place.bytes = bytes;
    }
  }
  return { prompts: outPrompts, delegations: outDelegations };
}
