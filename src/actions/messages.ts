import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const messages = defineAction({
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
    },
  ],
});
