import type { ActionSpec } from "../actions/spec.ts";
import { ACTION_TABLE } from "../actions/table.ts";

/**
 * The tool's description as the model reads it; its list of actions is the action table's. Every
 * request of the shepherd's model carries it, the schema and the lines below (edge/tool-cost.ts
 * counts them against a budget): what a field's description says is not said here again.
 */
export function toolDescription(table: readonly ActionSpec[] = ACTION_TABLE): string {
  return [
    "Run pi agents (sheep) in visible terminal panes and talk to them.",
    `Actions: ${table.map((a) => a.described).join(", ")}.`,
    "A sheep is named by its agentId or label.",
    "In a git repository a result carries evidence (the files the sheep changed, with the patch): trust it over the sheep's words.",
    "Errors start with a [code] and say the next step.",
  ].join(" ");
}

/** pi's system prompt lists it as "- shepherd: <snippet>" among the tools. */
export const TOOL_SNIPPET = "Run persistent pi sheep in panes; prompt them, then wait for the answers";

/**
 * pi's system prompt adds each as a rule ("- <guideline>"). Only how the actions go together: what
 * one call needs next, its result or refusal says (wait again after a timeout, reply to a question,
 * deliverAs for a busy sheep, land an isolated sheep's work).
 */
export const TOOL_GUIDELINES: readonly string[] = [
  "shepherd: `prompt` returns at once; `wait` returns the answer (one `wait` with `promptIds` for several sheep). To go on with other work or with the person meanwhile, `prompt` with `notify: true` (or `delegate` with `background: true`, which returns at once) and end your turn: the final result comes to you as a message by itself; do not also `wait` for it.",
  "shepherd: sheep stay open until you `close` them.",
];
