import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const interrupt = defineAction({
  name: "interrupt",
  described: "interrupt (abort a sheep's running turn; its prompt settles cancelled, the sheep stays)",
  fields: fieldsOf("agentId"),
  commands: [
    {
      name: "interrupt",
      usage: "interrupt <id|label>",
      summary: "abort a sheep's running turn (its prompt settles cancelled); the sheep stays, and its queued follow-ups go on",
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId]) => ({ action: "interrupt", agentId }),
      first: "sheep",
    },
  ],
});
