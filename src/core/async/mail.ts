/**
 * A sheep's messages to its shepherd, as the shepherd's model reads and answers them: listing
 * them with their read state (a listed message is read from then on, and that survives a reload
 * or a crash), and replying to a question whose tool call in the sheep waits for the answer.
 */
import type { AgentId, MessageId } from "../../domain/ids.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord, SheepMessage } from "../../ports/types.ts";

export interface ListedMessage extends SheepMessage {
  agentId: string;
  label: string;
  /** Read before this listing (every listed message is read after it). */
  read: boolean;
  /** For a question that waits: answered, or the sheep stopped waiting. */
  answer?: "replied" | "expired";
}

export interface ReplyOutcomeView {
  agentId: string;
  messageId: string;
}

export async function listMessages(herd: Herd, agentId: AgentId | undefined, unreadOnly: boolean, mark = true): Promise<ListedMessage[]> {
  const recs: AgentRecord[] =
    agentId !== undefined ? [await findRecord(herd, agentId)] : [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  const out: ListedMessage[] = [];
  let changed = false;
  for (const rec of recs) {
    if (rec.state === "closed") continue; // its files went with its pane
    const messages = await herd.opts.files.messages(rec.agentId);
    const answers = messages.some((m) => m.awaitReply) ? await herd.opts.files.replies(rec.agentId) : new Map<string, "replied" | "expired">();
    const readUpTo = Math.min(rec.messagesRead ?? 0, messages.length);
    messages.forEach((m, i) => {
      const read = i < readUpTo;
      if (unreadOnly && read) return;
      const answer = answers.get(m.messageId);
      out.push({ ...m, agentId: rec.agentId, label: rec.label, read, ...(answer ? { answer } : {}) });
    });
    // Only ever up: a log read short (damaged, replaced) must not make read messages unread again.
    if (mark && messages.length > (rec.messagesRead ?? 0)) {
      rec.messagesRead = messages.length;
      changed = true;
    }
  }
  if (changed) await herd.persist();
  return out;
}

export async function reply(herd: Herd, agentId: AgentId, messageId: MessageId, text: string): Promise<ReplyOutcomeView> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("reply", rec, () => replyTo(herd, rec, messageId, text));
}

async function replyTo(herd: Herd, rec: AgentRecord, messageId: MessageId, text: string): Promise<ReplyOutcomeView> {
  if (rec.state === "closed") throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) is closed; nobody waits for a reply.`);
  if (text.length === 0) throw new ShepherdError("invalid_params", "text must be a non-empty string.");
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > herd.opts.maxPromptBytes) {
    throw new ShepherdError("invalid_params", `text is ${bytes} bytes; the limit is ${herd.opts.maxPromptBytes}. Put the material in a file and name it.`);
  }
  const messages = await herd.opts.files.messages(rec.agentId);
  const m = messages.find((x) => x.messageId === messageId);
  if (!m) {
    throw new ShepherdError(
      "unknown_message",
      `sheep ${rec.agentId} (${rec.label}) has no message "${messageId}"; action "messages" lists its messages with their ids.`,
    );
  }
  if (m.kind !== "question" || !m.awaitReply) {
    throw new ShepherdError("reply_refused", `message ${m.messageId} is a ${m.kind} that waits for no reply; send the sheep a prompt instead.`);
  }
  const outcome = await herd.opts.files.reply(rec.agentId, m.messageId, text);
  if (outcome === "already_replied") throw new ShepherdError("reply_refused", `question ${m.messageId} was answered already; only the first reply counts.`);
  if (outcome === "expired") {
    throw new ShepherdError(
      "reply_refused",
      `sheep ${rec.agentId} stopped waiting for the answer to ${m.messageId} (after ${m.timeoutSec ?? "its"} s) and went on; send it a prompt instead.`,
    );
  }
  // Answered: the courier has nothing left to ask the conversation about it.
  herd.claimedQuestions.add(m.messageId);
  herd.audit({ event: "reply", agentId: rec.agentId, label: rec.label, messageId: m.messageId, bytes });
  return { agentId: rec.agentId, messageId: m.messageId };
}
