import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const start = defineAction({
  name: "start",
  described: "start (launch a sheep from an agent definition; no task is sent)",
  fields: fieldsOf("agent", "label", "placement", "direction", "cwd", "host", "model", "agentScope", "confirmProjectAgents", "isolate", "sandbox", "resume"),
  commands: [
    {
      name: "start",
      usage:
        "start <agent> [--label L] [--placement tab|pane|workspace] [--direction right|down] [--host NAME] [--cwd DIR] [--scope user|project|both] [--model M] [--isolate] [--sandbox]",
      summary:
        "start a sheep from an agent definition (no task is sent); --host: on a machine of your hosts setting; --isolate: in a git worktree of its own; --sandbox: in bubblewrap",
      flags: { label: "label", placement: "placement", direction: "direction", host: "host", cwd: "cwd", scope: "agentScope", model: "model" },
      switches: { isolate: "isolate", sandbox: "sandbox" },
      words: { min: 1, max: 1, what: "an agent name" },
      params: ([agent], flags) => ({ ...flags, action: "start", agent }),
      first: "agent",
    },
    {
      name: "resume",
      usage: "resume <id|label> [--label L] [--placement tab|pane|workspace] [--direction right|down]",
      summary: "continue a closed or exited sheep's conversation in a new pane",
      flags: { label: "label", placement: "placement", direction: "direction" },
      words: { min: 1, max: 1, what: "the id or label of a closed or exited sheep" },
      params: ([resume], flags) => ({ ...flags, action: "start", resume }),
      first: "resumable",
    },
  ],
});
