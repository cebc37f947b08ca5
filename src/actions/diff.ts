import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const diff = defineAction({
  name: "diff",
  described: "diff (what a sheep's last prompt changed in git)",
  fields: fieldsOf("target", "stat"),
  commands: [
    {
      name: "diff",
      usage: "diff <id|label> [--stat]",
      summary: "what the sheep's last prompt changed (the patch, or with --stat the files)",
      switches: { stat: "stat" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([target], flags) => ({ ...flags, action: "diff", target }),
      first: "sheep",
    },
  ],
});
