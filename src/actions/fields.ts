import { Type, type TSchema } from "@sinclair/typebox";

/**
 * Every field an action takes, as the tool's schema shows it: one flat object, because unions at
 * any level make some providers send `{}`. A field several actions share is described once, here;
 * the schema lists them in this order (actions/table.ts builds it).
 */

/** A plain string enum: unions at any level make some providers send `{}`. */
export function stringEnum<T extends readonly string[]>(values: T, description: string): TSchema {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], description });
}

/** A sheep's budget (spec: Budgets): its turn is stopped with [budget_exceeded] once it has spent any of these. */
const budget = Type.Object(
  {
    tokens: Type.Optional(Type.Number({ description: "All tokens of every model response (input, output, cache)." })),
    outputTokens: Type.Optional(Type.Number({ description: "Output tokens." })),
    costUsd: Type.Optional(Type.Number({ description: "Cost in USD, where the model reports its cost." })),
  },
  { description: "start/delegate: the most the sheep may spend; the turn that spends it is stopped with [budget_exceeded]." },
);

const delegateTask = Type.Object({
  agent: Type.String({ description: "Agent definition name." }),
  task: Type.String({ description: "The task text, sent exactly." }),
  cwd: Type.Optional(Type.String({ description: "Working directory for this task." })),
  host: Type.Optional(
    Type.String({ description: 'The machine this task runs on: a name of the "hosts" setting (default: the call\'s host, else this machine).' }),
  ),
  isolate: Type.Optional(Type.Boolean({ description: "Run this task's sheep in a git worktree of its own." })),
  sandbox: Type.Optional(Type.Boolean({ description: "Run this task's sheep in a sandbox (bubblewrap); false is refused where the user's default is on." })),
  budget: Type.Optional(budget),
});

/** Checked per action at run time (edge/command.ts), not by the schema. */
export const FIELDS = {
  agent: Type.String({ description: "start: the agent definition name (see action sheep)." }),
  label: Type.String({ description: "start: a short unique name for the sheep." }),
  placement: stringEnum(["tab", "pane", "workspace"] as const, 'start: where the pane goes (default "tab").'),
  direction: stringEnum(["right", "down"] as const, 'start with placement "pane": split direction (default "right").'),
  cwd: Type.String({ description: "start: working directory of the sheep (a path on its host)." }),
  host: Type.String({ description: 'start/delegate: the machine the sheep runs on, a name of the "hosts" setting; "local" or absent: this machine.' }),
  model: Type.String({ description: "start: model for the sheep (provider/id or pattern)." }),
  agentScope: stringEnum(["user", "project", "both"] as const, 'start/sheep: which agent definitions to use (default "user").'),
  resume: Type.String({
    description:
      'start: the agentId or label of a closed or exited sheep; a new sheep continues its conversation with the same agent, cwd and model (leave "agent" out).',
  }),
  confirmProjectAgents: Type.Boolean({ description: "start: ask before running a project agent (default true)." }),
  agentId: Type.String({ description: "prompt/status/close/interrupt/land/sync/reply (messages: optional): the id start returned, or the sheep's label." }),
  message: Type.String({ description: "prompt: the text to send. land: the message of the merge or squash commit (a fast-forward makes no commit)." }),
  notify: Type.Boolean({
    description: "prompt: when the answer is final and no wait returned it, it comes to you as a new message by itself (default false).",
  }),
  deliverAs: stringEnum(
    ["steer", "followUp"] as const,
    'prompt to a sheep that is still working: "steer" (into its running turn; the answer comes on its active prompt) or "followUp" (a new prompt queued behind it).',
  ),
  requestId: Type.String({
    description: "prompt: your own id for this prompt; sending the same requestId to the same sheep again returns the first handle and sends nothing.",
  }),
  promptId: Type.String({ description: "wait: one promptId." }),
  promptIds: Type.Array(Type.String(), { description: "wait: several promptIds, waited for together." }),
  timeout: Type.Number({ description: "wait: seconds before returning timeout (the prompt keeps running)." }),
  target: Type.String({ description: "read/diff: an agentId or a sheep's label." }),
  source: stringEnum(
    ["session", "screen", "egress"] as const,
    'read: "session" (default) is the sheep\'s recent conversation from its session file: prompts, answers, tool calls; "screen" is its pane\'s text; "egress" is what a sandboxed sheep tried to reach (its egress log).',
  ),
  turns: Type.Number({ description: "read (session): how many recent turns (default 3)." }),
  lines: Type.Number({ description: "read: at most this many recent lines (screen: default 40; egress: entries, default 50, at most 1000)." }),
  task: Type.String({ description: "delegate (single): the task for `agent`." }),
  tasks: Type.Array(delegateTask, { description: "delegate (parallel): tasks run by separate sheep, a few at a time." }),
  chain: Type.Array(delegateTask, { description: "delegate (chain): steps run in order; {previous} in a task becomes the previous step's final text." }),
  all: Type.Boolean({ description: "herd: also list the sheep of other shepherds on this machine (read-only)." }),
  keepOpen: Type.Boolean({ description: "delegate: keep each sheep open after its result (default false)." }),
  background: Type.Boolean({
    description: "delegate: return at once; one message with every result comes to you by itself when the last is final (default false).",
  }),
  unreadOnly: Type.Boolean({ description: "messages: only messages not listed before (default false)." }),
  messageId: Type.String({ description: "reply: the id of the sheep's question (m_...)." }),
  text: Type.String({ description: "reply: your answer to the sheep's question." }),
  isolate: Type.Boolean({
    description:
      "start/delegate: run the sheep in a git worktree of its own (a new branch from HEAD), never touching your checkout; bring its work in with action land (action sync merges your branch into its worktree first).",
  }),
  sandbox: Type.Boolean({
    description:
      "start/delegate: run the sheep in a sandbox (bubblewrap): it writes only its cwd, reads no secrets, reaches no network. true may be asked where the user's default is off; false is refused where it is on.",
  }),
  budget: Type.Unsafe<Record<string, number>>({
    ...budget,
    description:
      'start: the most the sheep may spend, {"tokens"?, "outputTokens"?, "costUsd"?}; delegate: the whole delegation\'s, shared evenly by its tasks (a task\'s own "budget" may be tighter). The turn that spends it is stopped with [budget_exceeded]; a start whose reservation does not fit the day\'s "budgets" setting is refused with it.',
  }),
  removeWorktree: Type.Boolean({ description: "close: also remove an isolated sheep's worktree and branch (kept by default)." }),
  force: Type.Boolean({
    description:
      "close with removeWorktree: remove it even though it holds work that was never landed. prune: also remove worktrees no record knows (a start cut short) that hold work.",
  }),
  squash: Type.Boolean({ description: "land: one new commit on your branch instead of a merge of the sheep's branch." }),
  stat: Type.Boolean({ description: "diff: only the changed files and line counts, no patch." }),
} satisfies Record<string, TSchema>;

export type FieldName = keyof typeof FIELDS;

/** The shared fields an action takes, in the order given: the order its refusals list them. */
export function fieldsOf(...names: FieldName[]): Record<string, TSchema> {
  return Object.fromEntries(names.map((n) => [n, FIELDS[n]]));
}
