import { sheepCall } from "./call-text.ts";
import type { CloseOutcome } from "../ports/types.ts";
import { commandWorktreeSteps } from "./command-steps.ts";
import { info } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { ShepherdError } from "../domain/errors.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean, requireString } from "./checks.ts";
import { closeText } from "../texts/format.ts";

export type CloseCommand = { action: "close"; target: string; removeWorktree?: boolean; force?: boolean };

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
      // The tool's words, with the next steps for a kept worktree as a person types them.
      answer: async (run) => {
        const r = await run();
        const closed = r.details.closed as CloseOutcome;
        const label = typeof r.details.label === "string" ? r.details.label : undefined;
        return info(closeText(closed, label, commandWorktreeSteps(label ?? closed.agentId)));
      },
    },
  ],
  renderCall: (args, t) => sheepCall(args, t),
  parse: (p): CloseCommand => {
    const removeWorktree = optionalBoolean(p, "removeWorktree");
    const force = optionalBoolean(p, "force");
    if (force !== undefined && removeWorktree !== true) {
      throw new ShepherdError("invalid_params", '"force" only applies together with "removeWorktree": true.');
    }
    return defined<CloseCommand>({ action: "close", target: requireString(p, "agentId", "close"), removeWorktree, force });
  },
  run: async (cmd, { shepherd }) => {
    // A closed sheep's last label still leads to it: to remove its kept worktree, and so that
    // closing it again says it was closed, by label as by id.
    const agentId = shepherd.registry.resolve(cmd.target, { closed: true });
    const label = shepherd.registry.agents.get(agentId)?.label;
    const closed = await shepherd.close(agentId, {
      ...(cmd.removeWorktree !== undefined ? { removeWorktree: cmd.removeWorktree } : {}),
      ...(cmd.force !== undefined ? { force: cmd.force } : {}),
    });
    return result("close", closeText(closed, label), { closed, ...(label !== undefined ? { label } : {}) });
  },
});
