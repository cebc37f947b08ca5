import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const close = defineAction({
  name: "close",
  described: "close",
  fields: fieldsOf("agentId", "removeWorktree", "force"),
  commands: [
    {
      name: "close",
      usage: "close <id|label> [--remove-worktree [--force]]",
      summary: "close a sheep and its pane (its session file is kept, and said where; a worktree too, unless --remove-worktree)",
      switches: { "remove-worktree": "removeWorktree", force: "force" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId], flags) => ({ ...flags, action: "close", agentId }),
      first: "sheep",
    },
  ],
});
