import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean } from "./checks.ts";
import { pruneText } from "../texts/format.ts";

/** force: also remove worktrees no record knows that hold work. */
export type PruneCommand = { action: "prune"; force?: boolean };

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
  parse: (p): PruneCommand => defined<PruneCommand>({ action: "prune", force: optionalBoolean(p, "force") }),
  run: async (cmd, { shepherd }) => {
    const pruned = await shepherd.prune({ force: cmd.force === true });
    return result("prune", pruneText(pruned), {
      removed: pruned.removed,
      exited: pruned.exited,
      unclosed: pruned.unclosed,
      kept: pruned.kept,
      forgotten: pruned.forgotten,
      worktrees: pruned.worktrees,
    });
  },
});
