import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const prune = defineAction({
  name: "prune",
  described: "prune (forget sheep whose panes are gone)",
  fields: fieldsOf("force"),
  commands: [
    {
      name: "prune",
      usage: "prune [--force]",
      summary: "forget sheep whose panes are gone, and remove worktrees no record knows (--force: those holding work too)",
      switches: { force: "force" },
      words: { min: 0, max: 0, what: "" },
      params: (_words, flags) => ({ ...flags, action: "prune" }),
    },
  ],
});
