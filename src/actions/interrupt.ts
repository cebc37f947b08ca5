import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { requireString } from "./checks.ts";

/** Aborts the sheep's running turn; its prompt settles cancelled and the sheep stays. */
export type InterruptCommand = { action: "interrupt"; target: string };

export function interruptText(r: { agentId: string; promptId: string }, label: string | undefined): string {
  const who = label ? `${label} (${r.agentId})` : r.agentId;
  return `Interrupted ${who}: its turn on ${r.promptId} is aborted, and that prompt settles cancelled (wait for it to see what it did so far). The sheep stays open; queued follow-ups go on.`;
}

export const interrupt = defineAction({
  name: "interrupt",
  described: "interrupt (abort a sheep's turn: its prompt is cancelled, the sheep stays)",
  fields: fieldsOf("agentId"),
  commands: [
    {
      name: "interrupt",
      usage: "interrupt <id|label>",
      summary: "abort a sheep's running turn (its prompt settles cancelled); the sheep stays, and its queued follow-ups go on",
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId]) => ({ action: "interrupt", agentId }),
      first: "sheep",
    },
  ],
  parse: (p): InterruptCommand => ({ action: "interrupt", target: requireString(p, "agentId", "interrupt") }),
  run: async (cmd, { shepherd }) => {
    const interrupted = await shepherd.interrupt(shepherd.registry.resolve(cmd.target));
    return result("interrupt", interruptText(interrupted, shepherd.registry.agents.get(interrupted.agentId)?.label), { interrupted });
  },
});
