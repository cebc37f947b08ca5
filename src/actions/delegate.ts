import { printable } from "../domain/printable.ts";
import { callString, preview } from "./call-text.ts";
import { parseDelegate, type DelegateCommand } from "./delegate-command.ts";
import { delegateTasks } from "./delegate-run.ts";
import { fieldsOf } from "./fields.ts";
import { result } from "./result.ts";
import { defineAction } from "./spec.ts";

export type { DelegateCommand, RawTask } from "./delegate-command.ts";

/** The model's one-shot tasks; /shepherd has no form of it (a person starts and prompts sheep). */
export const delegate = defineAction<"delegate", DelegateCommand>({
  name: "delegate",
  described: "delegate (one-shot tasks; each sheep closed after its result)",
  fields: fieldsOf(
    "agent",
    "task",
    "tasks",
    "chain",
    "agentScope",
    "confirmProjectAgents",
    "keepOpen",
    "background",
    "cwd",
    "host",
    "isolate",
    "sandbox",
    "budget",
  ),
  commands: [],
  renderCall: (args, t, expanded) => {
    const parts: string[] = [];
    const list = (Array.isArray(args.tasks) ? args.tasks : Array.isArray(args.chain) ? args.chain : []) as { agent?: string; task?: string }[];
    if (args.isolate === true) parts.push(t.fg("dim", "⎇"));
    if (list.length === 0) {
      parts.push(t.fg("accent", callString(args, "agent") ?? "?"), t.fg("dim", preview(callString(args, "task") ?? "", 60, expanded, "  ")));
    } else {
      const mode = Array.isArray(args.chain) ? "chain" : "parallel";
      parts.push(t.fg("muted", `${mode} (${list.length} ${mode === "chain" ? "steps" : "tasks"})`));
      // {previous} stays in view: it is where the step before's answer goes.
      const shown = (expanded ? list : list.slice(0, 3)).map(
        (x, i) => `\n  ${i + 1}. ${t.fg("accent", printable(String(x.agent ?? "?")))} ${t.fg("dim", preview(String(x.task ?? ""), 60, expanded, "     "))}`,
      );
      parts.push(shown.join("") + (!expanded && list.length > 3 ? t.fg("dim", `\n  … ${list.length - 3} more`) : ""));
    }
    return parts;
  },
  parse: parseDelegate,
  run: async (cmd, ctx) => {
    const { text, details } = await delegateTasks(cmd, ctx);
    return result("delegate", text, details);
  },
});
