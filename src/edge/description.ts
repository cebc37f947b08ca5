import type { ActionSpec } from "../actions/spec.ts";
import { ACTION_TABLE } from "../actions/table.ts";

/** The tool's description as the model reads it; its list of actions is the action table's. */
export function toolDescription(table: readonly ActionSpec[] = ACTION_TABLE): string {
  return [
    "Run other pi agents (sheep) as persistent, visible agents in terminal panes (herdr or tmux), and talk to them.",
    `Actions: ${table.map((a) => a.described).join(", ")}.`,
    "In a git repository each result carries evidence: the files the sheep changed during that prompt, with line counts and the patch.",
    "Actions that take a sheep accept its agentId or its label. Errors start with a [code].",
  ].join(" ");
}
