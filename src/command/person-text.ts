/**
 * What the person is told in pi's transcript about what is theirs: a prompt they sent finished
 * while nobody waited, a sheep they prompted asks them, and a reply they gave in the panel.
 */
import type { PersonNote } from "../core/shepherd.ts";
import { commandReplyHowTo } from "./text.ts";
import { quoteWord } from "./tokens.ts";

/** How much of each question the transcript shows; `/shepherd messages` shows them whole. */
const QUESTION_CHARS = 2000;
/** How much of a panel reply the transcript repeats. */
const REPLY_CHARS = 500;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

export function personNoteText(note: PersonNote): string {
  if (note.kind === "answered") {
    return `🐑 ${note.label} (${note.agentId}) finished your prompt ${note.promptId}: ${note.status}. Its answer: /shepherd wait ${quoteWord(note.label)}`;
  }
  const all = note.messages ?? [note.message];
  const lines = all.flatMap((m) => {
    const waits = m.awaitReply ? ` It waits for your answer${m.timeoutSec ? ` (for up to ${m.timeoutSec} s)` : ""}.` : "";
    return [`🐑 ${note.label} (${note.agentId}) asks you (${m.messageId}):${waits}`, cut(m.text, QUESTION_CHARS), commandReplyHowTo(note.label, m.messageId)];
  });
  const more = note.more ? [`(${note.more} more questions come next; /shepherd messages ${quoteWord(note.label)} lists them.)`] : [];
  return [...lines, ...more].join("\n");
}

/** A reply given in the panel, said in the transcript too: the person at pi sees what was answered. */
export function panelReplyText(r: { agentId: string; messageId: string }, label: string | undefined, text: string): string {
  const who = label ? `${label} (${r.agentId})` : r.agentId;
  return `🐑 Answered ${r.messageId} of ${who} in the panel: ${cut(text, REPLY_CHARS)}`;
}
