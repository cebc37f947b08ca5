import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const reply = defineAction({
  name: "reply",
  described: "reply (answer a sheep's question that waits)",
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
});
