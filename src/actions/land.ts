import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const land = defineAction({
  name: "land",
  described: "land (merge an isolated sheep's work into your branch)",
  fields: fieldsOf("agentId", "squash", "message"),
  commands: [
    {
      name: "land",
      usage: "land <id|label> [--squash] [--message TEXT]",
      summary: "merge an isolated sheep's work into your current branch (only if your tree and the merge are clean)",
      switches: { squash: "squash" },
      flags: { message: "message" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId], flags) => ({ ...flags, action: "land", agentId }),
      first: "sheep",
    },
  ],
});
