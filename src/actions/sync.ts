import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const sync = defineAction({
  name: "sync",
  described: "sync (merge your branch into an isolated sheep's worktree)",
  fields: fieldsOf("agentId"),
  commands: [
    {
      name: "sync",
      usage: "sync <id|label>",
      summary: "merge your current branch into an isolated sheep's worktree (there only); conflicts stay there and its next prompt names them",
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId]) => ({ action: "sync", agentId }),
      first: "sheep",
    },
  ],
});
