import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const read = defineAction({
  name: "read",
  described: "read (a sheep's recent conversation: prompts, answers, tool calls; or its screen)",
  fields: fieldsOf("target", "source", "turns", "lines"),
  commands: [
    {
      name: "read",
      usage: "read <id|label> [--turns N] [--source session|screen] [--lines N]",
      summary: "a sheep's recent conversation (prompts, answers, tool calls), or its screen",
      flags: { turns: "turns", source: "source", lines: "lines" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([target], flags) => ({ ...flags, action: "read", target }),
      first: "sheep",
    },
  ],
});
