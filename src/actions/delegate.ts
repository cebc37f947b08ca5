import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

/** The model's one-shot tasks; /shepherd has no form of it (a person starts and prompts sheep). */
export const delegate = defineAction({
  name: "delegate",
  described: "delegate (one-shot tasks; background: true returns at once and reports back by itself)",
  fields: fieldsOf("agent", "task", "tasks", "chain", "agentScope", "confirmProjectAgents", "keepOpen", "background", "cwd", "host", "isolate", "sandbox"),
  commands: [],
});
