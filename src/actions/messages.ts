import type { ListedMessage } from "../core/async/mail.ts";
import { commandReplyHowTo } from "./command-steps.ts";
import { info } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean, optionalString } from "./checks.ts";
import { messagesText, replyHowTo } from "../texts/format.ts";

export type MessagesCommand = { action: "messages"; agentId?: string; unreadOnly?: boolean };

export const messages = defineAction<"messages", MessagesCommand>({
  name: "messages",
  described: "messages (what sheep told or asked you)",
  fields: fieldsOf("agentId", "unreadOnly"),
  commands: [
    {
      name: "messages",
      usage: "messages [<id|label>] [--unread]",
      summary: "what the sheep told or asked their shepherd (listed ones count as read)",
      switches: { unread: "unreadOnly" },
      words: { min: 0, max: 1, what: "" },
      params: ([agentId], flags) => ({ action: "messages", ...(agentId !== undefined ? { agentId } : {}), unreadOnly: flags.unreadOnly === true }),
      first: "sheep",
      answer: async (run, cmd) => {
        const list = (await run()).details.messages as ListedMessage[];
        return info(messagesText(list, cmd.unreadOnly === true, (m) => commandReplyHowTo(m.label, m.messageId)));
      },
    },
  ],
  parse: (p): MessagesCommand =>
    defined<MessagesCommand>({ action: "messages", agentId: optionalString(p, "agentId"), unreadOnly: optionalBoolean(p, "unreadOnly") }),
  run: async (cmd, { shepherd }) => {
    const messages = await shepherd.messages(cmd.agentId === undefined ? undefined : shepherd.registry.resolve(cmd.agentId), cmd.unreadOnly === true);
    return result(
      "messages",
      messagesText(messages, cmd.unreadOnly === true, (m) => replyHowTo(m.agentId, m.messageId)),
      { messages },
    );
  },
});
