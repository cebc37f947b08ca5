/**
 * A sheep's messages to its shepherd: `messages.jsonl`, one JSON object a line, only ever appended
 * to by the sheep. The shepherd reads it as data that may be damaged or forged: a line that is
 * not a well-formed message is skipped, and an unfinished last line waits for its newline.
 */
import { isWellFormedId } from "../domain/ids.ts";
import { MAX_MESSAGE_CHARS, timeOf } from "../domain/sheep-data.ts";
import type { MessageKind, SheepMessage } from "../ports/types.ts";

export const MESSAGE_KINDS: readonly MessageKind[] = ["progress", "question", "done"];
export { MAX_MESSAGE_CHARS };
/** The whole log; a sheep that reaches it is told so by its tool. */
export const MAX_LOG_BYTES = 4 * 1024 * 1024;
/** How long a question may wait for its reply, in seconds (default and most). */
export const DEFAULT_REPLY_TIMEOUT_SEC = 600;
export const MAX_REPLY_TIMEOUT_SEC = 24 * 3600;

function messageOf(x: unknown, now: number): SheepMessage | undefined {
  if (!x || typeof x !== "object" || Array.isArray(x)) return undefined;
  const m = x as Record<string, unknown>;
  if (typeof m.messageId !== "string" || !isWellFormedId(m.messageId, "message")) return undefined;
  if (typeof m.kind !== "string" || !(MESSAGE_KINDS as readonly string[]).includes(m.kind)) return undefined;
  // A time that is none (or megabytes of text) makes no message: every view and event shows `at`.
  const at = timeOf(m.at, now);
  if (typeof m.text !== "string" || m.text.length > MAX_MESSAGE_CHARS || at === undefined) return undefined;
  if (m.awaitReply !== undefined && typeof m.awaitReply !== "boolean") return undefined;
  if (m.timeoutSec !== undefined && !(typeof m.timeoutSec === "number" && m.timeoutSec >= 0 && m.timeoutSec <= MAX_REPLY_TIMEOUT_SEC)) return undefined;
  if (m.promptId !== undefined && !(typeof m.promptId === "string" && isWellFormedId(m.promptId, "prompt"))) return undefined;
  return {
    messageId: m.messageId,
    kind: m.kind as MessageKind,
    text: m.text,
    at,
    ...(m.awaitReply === true ? { awaitReply: true } : {}),
    ...(typeof m.timeoutSec === "number" ? { timeoutSec: m.timeoutSec } : {}),
    ...(typeof m.promptId === "string" ? { promptId: m.promptId } : {}),
  };
}

/** The messages of a log's complete lines, in order; a message id seen twice counts once. */
export function parseMessageLog(text: string, now = Date.now()): SheepMessage[] {
  const end = text.lastIndexOf("\n");
  if (end < 0) return [];
  const out: SheepMessage[] = [];
  const seen = new Set<string>();
  for (const line of text.slice(0, end).split("\n")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const m = messageOf(parsed, now);
    if (m && !seen.has(m.messageId)) {
      seen.add(m.messageId);
      out.push(m);
    }
  }
  return out;
}

export function messageLine(m: SheepMessage): string {
  return `${JSON.stringify(m)}\n`;
}
