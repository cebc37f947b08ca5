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

/** pi's system prompt lists it as "- shepherd: <snippet>" among the tools. */
export const TOOL_SNIPPET = "Start persistent pi sheep in panes, prompt them without waiting, then wait for one or many answers";

/** pi's system prompt adds each as a rule ("- <guideline>"): every request of the shepherd's model carries them. */
export const TOOL_GUIDELINES: readonly string[] = [
  "shepherd: talking to a sheep takes two calls: `prompt` returns a promptId at once, then `wait` returns the answer. Never expect an answer from `prompt`.",
  "shepherd: for short work whose answer you need before you can go on, `prompt` then `wait`. To run work in parallel, `start` several sheep, `prompt` each one, then make ONE `wait` call with all their `promptIds`.",
  'shepherd: to keep talking with the person while sheep work, `prompt` with `notify: true` (or `delegate` with `background: true`) and end your turn: each result comes back to you as a new message by itself ("[pi-shepherd] Result of …"); do not also `wait` for it.',
  'shepherd: to correct a sheep mid-task, `prompt` it with `deliverAs: "steer"` (the answer still comes on its running prompt); to line up the next task behind the current one, `deliverAs: "followUp"` (at most 8 queued). Without deliverAs a busy sheep refuses with [prompt_pending].',
  'shepherd: a sheep may ask you a question (a message "[pi-shepherd] Sheep … asks (m_…)", or a `wait` result `blocked` with a question): answer with `reply` {agentId, messageId, text}. `messages` lists what sheep told you.',
  "shepherd: a `wait` that returns `timeout` stopped nothing; call `wait` again with the same promptId. Give a `requestId` when a prompt must not be sent twice (e.g. when retrying after an error).",
  "shepherd: sheep stay open after `wait`; `close` each sheep when you no longer need it.",
  "shepherd: a sheep that edits files should get `isolate: true` (its own git worktree and branch); trust the `evidence` in its result over its words, and `land` its work when it is right.",
];
