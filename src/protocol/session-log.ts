/**
 * A sheep's recent conversation, read from the tail of its pi session file (JSONL, version 3:
 * entries linked by id/parentId). The file is pi's, may be huge, half-written or corrupt: only
 * the tail that holds the turns asked for is read, every line is checked, and whatever cannot
 * be understood is left out rather than trusted.
 */
import type { FileHandle } from "node:fs/promises";
import { isRecord } from "../domain/guards.ts";
import { printable } from "../domain/printable.ts";
import { timeOf } from "../domain/sheep-data.ts";
import type { ConversationLine, ConversationTurn } from "../ports/types.ts";
import { openRegular, READ_LIMITS } from "./bounded-read.ts";

/** The tail read first, and the most ever read from one file. */
const FIRST_CHUNK = 64 * 1024;
const MAX_TAIL = READ_LIMITS.session;
/** Longest texts kept per line: a transcript is for reading, the exact answers stay in the outbox. */
const MAX_PROMPT = 4000;
const MAX_ANSWER = 16_000;
const MAX_TOOL = 200;

export interface SessionTail {
  turns: ConversationTurn[];
  /** Turns before these exist (in the file, or in a part of it that was not read). */
  earlier: boolean;
}

/** The last `turns` turns on the session's current branch; undefined when the file does not exist. */
export async function readSessionTail(path: string, turns: number): Promise<SessionTail | undefined> {
  // The sheep's pi writes it, and so can the sheep: a FIFO or a symlink there is no session.
  const opened = await openRegular(path);
  if (!opened.ok) {
    if (opened.why === "missing" || opened.why === "not_regular") return undefined;
    throw new Error(`the session file ${path} could not be read`);
  }
  const file: FileHandle = opened.file;
  try {
    const { size } = opened.stat;
    for (let chunk = FIRST_CHUNK; ; chunk *= 2) {
      const length = Math.min(size, chunk, MAX_TAIL);
      const buffer = Buffer.alloc(length);
      await file.read(buffer, 0, length, size - length);
      const whole = length === size;
      const found = conversation(buffer.toString("utf8"), !whole);
      // Enough turns, or all there is to read: one more turn than asked shows whether earlier ones exist.
      if (found.length > turns || whole || length >= MAX_TAIL) {
        return { turns: found.slice(-turns), earlier: found.length > turns || !whole };
      }
    }
  } finally {
    await file.close();
  }
}

/** Turns of a session file's text; `cut` when it starts inside a line (a tail). */
export function conversation(text: string, cut: boolean): ConversationTurn[] {
  const rows = text.split("\n");
  if (cut) rows.shift();
  const entries: Entry[] = [];
  for (const row of rows) {
    const entry = entryOf(row);
    if (entry) entries.push(entry);
  }
  return turnsOf(branch(entries), cut);
}

interface Entry {
  id?: string;
  parentId?: string | null;
  timestamp?: string;
  message?: Record<string, unknown>;
}

function entryOf(row: string): Entry | undefined {
  if (!row.trim()) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(row);
  } catch {
    return undefined; // a half-written last line, or damage: skipped, never guessed at
  }
  if (!isRecord(v) || v.type === "session") return undefined;
  // A time every view can draw, or none.
  const timestamp = timeOf(v.timestamp);
  return {
    ...(typeof v.id === "string" ? { id: v.id } : {}),
    ...(typeof v.parentId === "string" || v.parentId === null ? { parentId: v.parentId } : {}),
    ...(timestamp !== undefined ? { timestamp } : {}),
    ...(v.type === "message" && isRecord(v.message) ? { message: v.message } : {}),
  };
}

/**
 * The current branch: pi appends every entry, so after /tree the file also holds abandoned
 * branches. The last entry is the leaf; its parents, as far as the tail reaches, are the branch.
 */
function branch(entries: Entry[]): Entry[] {
  const leaf = entries[entries.length - 1];
  if (!leaf?.id) return entries;
  const byId = new Map(entries.filter((e) => e.id).map((e) => [e.id!, e]));
  const chain: Entry[] = [];
  const seen = new Set<string>();
  for (let e: Entry | undefined = leaf; e?.id && !seen.has(e.id); e = e.parentId ? byId.get(e.parentId) : undefined) {
    seen.add(e.id);
    chain.push(e);
  }
  return chain.reverse();
}

/**
 * A turn starts at each prompt the sheep got. In a tail (`cut`), what comes before the first prompt
 * is the end of a turn whose start is earlier: kept as a turn marked `cut` where it holds anything,
 * or where nothing else was found (one turn larger than the tail), so a reader is told what is there
 * and that more is earlier, never that nothing was said.
 */
function turnsOf(entries: Entry[], cut: boolean): ConversationTurn[] {
  const turns = cutTurnFirst(entries, cut);
  if (turns.length > 1 && turns[0]!.cut && turns[0]!.lines.length === 0) turns.shift();
  return turns;
}

function cutTurnFirst(entries: Entry[], cut: boolean): ConversationTurn[] {
  const turns: ConversationTurn[] = cut ? [{ cut: true, lines: [] }] : [];
  const toolLines = new Map<string, ConversationLine>();
  for (const e of entries) {
    const m = e.message;
    if (!m) continue;
    if (m.role === "user") {
      turns.push({ ...(e.timestamp ? { at: e.timestamp } : {}), lines: [{ kind: "prompt", text: capped(textOf(m.content), MAX_PROMPT) }] });
      continue;
    }
    const turn = turns[turns.length - 1];
    if (!turn) continue;
    if (m.role === "assistant") {
      const parts = Array.isArray(m.content) ? m.content : [];
      const answer = parts
        .filter((p) => isRecord(p) && p.type === "text" && typeof p.text === "string")
        .map((p) => (p as { text: string }).text)
        .join("");
      if (answer.trim()) turn.lines.push({ kind: "answer", text: capped(answer, MAX_ANSWER) });
      for (const p of parts) {
        if (!isRecord(p) || p.type !== "toolCall" || typeof p.name !== "string") continue;
        const line: ConversationLine = { kind: "tool", text: capped(`${p.name} ${argsOf(p.arguments)}`.trim(), MAX_TOOL) };
        turn.lines.push(line);
        if (typeof p.id === "string") toolLines.set(p.id, line);
      }
      if (m.stopReason === "error" || m.stopReason === "aborted") {
        const why = typeof m.errorMessage === "string" ? m.errorMessage : m.stopReason;
        turn.lines.push({ kind: "error", text: capped(`${m.stopReason}: ${why}`, MAX_TOOL) });
      }
    } else if (m.role === "toolResult" && m.isError === true && typeof m.toolCallId === "string") {
      const line = toolLines.get(m.toolCallId);
      if (line) line.failed = true;
    }
  }
  return turns;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (isRecord(p) && p.type === "text" && typeof p.text === "string" ? p.text : isRecord(p) && p.type === "image" ? "[image]" : ""))
    .join("");
}

function argsOf(args: unknown): string {
  if (args === undefined) return "";
  try {
    return JSON.stringify(args) ?? "";
  } catch {
    return "";
  }
}

/** Text a sheep's model wrote, safe to show (printable), cut at `max`. */
function capped(text: string, max: number): string {
  const safe = printable(text);
  return safe.length > max ? `${safe.slice(0, max)}… [${safe.length - max} more characters]` : safe;
}
