import { parseDelegate, type DelegateCommand } from "./delegate-command.ts";
import { delegateTasks } from "./delegate-run.ts";
import { fieldsOf } from "./fields.ts";
import { result } from "./result.ts";
import { defineAction } from "./spec.ts";

export type { DelegateCommand, RawTask } from "./delegate-command.ts";

/** The model's one-shot tasks; /shepherd has no form of it (a person starts and prompts sheep). */
export const delegate = defineAction<"delegate", DelegateCommand>({
  name: "delegate",
  described: "delegate (one-shot tasks; background: true returns at once and reports back by itself)",
  fields: fieldsOf("agent", "task", "tasks", "chain", "agentScope", "confirmProjectAgents", "keepOpen", "background", "cwd", "host", "isolate"),
  commands: [],
  parse: parseDelegate,
  run: async (cmd, ctx) => {
    const { text, details } = await delegateTasks(cmd, ctx);
    return result("delegate", text, details);
  },
});
