import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const status = defineAction({
  name: "status",
  described: "status",
  fields: fieldsOf("agentId"),
  commands: [
    {
      name: "status",
      usage: "status <id|label>",
      summary: "one sheep's state",
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId]) => ({ action: "status", agentId }),
      first: "sheep",
    },
  ],
});
