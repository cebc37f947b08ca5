import { sheepCall } from "./call-text.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { requireString } from "./checks.ts";
import { syncText } from "../texts/format.ts";

/** Merges the user's current branch into an isolated sheep's worktree. */
export type SyncCommand = { action: "sync"; target: string };

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
  renderCall: (args, t) => sheepCall(args, t),
  parse: (p): SyncCommand => ({ action: "sync", target: requireString(p, "agentId", "sync") }),
  run: async (cmd, { shepherd }) => {
    // As for land: a closed isolated sheep keeps its worktree, found by its last label too.
    const synced = await shepherd.sync(shepherd.registry.resolve(cmd.target, { closed: true }));
    return result("sync", syncText(synced), { synced });
  },
});
