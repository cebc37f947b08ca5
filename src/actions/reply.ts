import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { ShepherdError } from "../domain/errors.ts";
import { result } from "./result.ts";
import { requireString } from "./checks.ts";
import { type MessageId, parseMessageId } from "../domain/ids.ts";

export type ReplyCommand = { action: "reply"; agentId: string; messageId: MessageId; text: string };

export function replyText(r: { agentId: string; messageId: string }, label: string | undefined): string {
  const who = label ? `${label} (${r.agentId})` : r.agentId;
  return `Replied to ${r.messageId} of ${who}; its shepherd_message call returns your text and it goes on.`;
}

export const reply = defineAction({
  name: "reply",
  described: "reply (answer a sheep's question)",
  fields: fieldsOf("agentId", "messageId", "text"),
  commands: [
    {
      name: "reply",
      usage: "reply <id|label> <messageId> <text…>",
      summary: "answer a sheep's question that waits for a reply",
      words: { min: 3, max: Number.POSITIVE_INFINITY, what: "a sheep's id or label, the question's id and your answer" },
      // The answer is the rest of the line, so it needs no quotes.
      params: ([agentId, messageId, ...text]) => ({ action: "reply", agentId, messageId, text: text.join(" ") }),
      first: "sheep",
    },
  ],
  parse: (p): ReplyCommand => {
    const text = p.text;
    if (typeof text !== "string" || text.length === 0) throw new ShepherdError("invalid_params", 'action "reply" needs "text" (a non-empty string).');
    return { action: "reply", agentId: requireString(p, "agentId", "reply"), messageId: parseMessageId(p.messageId, "reply"), text };
  },
  run: async (cmd, { shepherd }) => {
    const replied = await shepherd.reply(shepherd.registry.resolve(cmd.agentId), cmd.messageId, cmd.text);
    const label = shepherd.registry.agents.get(replied.agentId)?.label;
    return result("reply", replyText(replied, label), { replied, ...(label !== undefined ? { label } : {}) });
  },
});
