import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

/** Lists agent definitions, not running sheep (that is "herd"); the name is the contract's. */
export const sheep = defineAction({
  name: "sheep",
  described: "sheep (list agent definitions)",
  fields: fieldsOf("agentScope"),
  commands: [
    {
      name: "sheep",
      aliases: ["agents"],
      usage: "sheep [user|project|both]",
      summary: "agent definitions, and files skipped with the reason",
      words: { min: 0, max: 1, what: "" },
      params: ([agentScope]) => ({ action: "sheep", ...(agentScope !== undefined ? { agentScope } : {}) }),
      first: "scope",
    },
  ],
});
