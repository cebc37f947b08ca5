import { Type, type TSchema } from "@sinclair/typebox";

/**
 * Every field an action takes, as the tool's schema shows it: one flat object, because unions at
 * any level make some providers send `{}`. A field several actions share is described once, here;
 * the schema lists them in this order (actions/table.ts builds it).
 */

/** A plain string enum: unions at any level make some providers send `{}`. */
export function stringEnum<T extends readonly string[]>(values: T, description?: string): TSchema {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...(description === undefined ? {} : { description }) });
}

// Every request of the shepherd's model carries these words (issue 36): each thing is said once,
// here or in the tool's description, never in both; a field's name and type say the rest, and the
// refusal or result of the call that needs more says it then (e.g. [prompt_pending] names deliverAs).

/** A sheep's budget (spec: Budgets); its keys and values are checked by the action's parse. */
const budget = Type.Object({ tokens: Type.Optional(Type.Number()), outputTokens: Type.Optional(Type.Number()), costUsd: Type.Optional(Type.Number()) });

/** A task's fields mean what the call's fields of the same names mean (the tasks field says so). */
const delegateTask = Type.Object({
  agent: Type.String(),
  task: Type.String(),
  cwd: Type.Optional(Type.String()),
  host: Type.Optional(Type.String()),
  isolate: Type.Optional(Type.Boolean()),
  sandbox: Type.Optional(Type.Boolean()),
  budget: Type.Optional(Type.Unsafe<Record<string, number>>({ type: "object" })),
});

/** Checked per action at run time (edge/command.ts), not by the schema. */
export const FIELDS = {
  agent: Type.String({ description: "start, delegate: agent definition name." }),
  label: Type.String({ description: "start: unique short name." }),
  placement: stringEnum(["tab", "pane", "workspace"] as const, "start (default tab)."),
  direction: stringEnum(["right", "down"] as const, "start, placement pane (default right)."),
  cwd: Type.String({ description: "start, delegate: working directory on the sheep's host." }),
  host: Type.String({ description: 'start, delegate: a name of the "hosts" setting, or "local".' }),
  model: Type.String({ description: "start: provider/id or pattern." }),
  agentScope: stringEnum(["user", "project", "both"] as const, "start, sheep, delegate: which agent definitions (default user)."),
  resume: Type.String({ description: "start, instead of agent: a closed or exited sheep whose conversation a new sheep continues." }),
  confirmProjectAgents: Type.Boolean({ description: "start, delegate: ask before a project agent runs (default true)." }),
  agentId: Type.String(),
  message: Type.String({ description: "prompt: the text. land: the commit's message." }),
  // notify and background: the guidelines say how they go (edge/description.ts).
  notify: Type.Boolean(),
  deliverAs: stringEnum(["steer", "followUp"] as const, "prompt a working sheep: into its running turn, or queued behind it."),
  requestId: Type.String({ description: "prompt: your id for it; sent again, it returns the first handle and sends nothing." }),
  promptId: Type.String(),
  promptIds: Type.Array(Type.String(), { description: "wait: several, together." }),
  timeout: Type.Number({ description: "wait: seconds; the prompt keeps running." }),
  target: Type.String({ description: "read, diff: the sheep." }),
  source: stringEnum(["session", "screen", "egress"] as const, "read (default session)."),
  turns: Type.Number({ description: "read session (default 3)." }),
  lines: Type.Number({ description: "read screen (default 40), egress (default 50)." }),
  task: Type.String({ description: "delegate: the task for agent." }),
  tasks: Type.Array(delegateTask, { description: "delegate: in parallel; a task's fields mean the call's, which it takes where it has none." }),
  chain: Type.Array(delegateTask, { description: "delegate: in order; {previous} in a task is the previous step's answer." }),
  all: Type.Boolean({ description: "herd: also other shepherds' sheep, read-only." }),
  keepOpen: Type.Boolean({ description: "delegate: keep sheep open after their results." }),
  background: Type.Boolean(),
  unreadOnly: Type.Boolean({ description: "messages: only those not listed before." }),
  messageId: Type.String({ description: "reply: the question's m_ id." }),
  text: Type.String({ description: "reply: your answer." }),
  isolate: Type.Boolean({ description: "start, delegate: for a sheep that edits files: its own git worktree and branch, never your checkout." }),
  sandbox: Type.Boolean({ description: "start, delegate: bubblewrap: writes only its cwd, reads no secrets, reaches only its model and allowed hosts." }),
  removeWorktree: Type.Boolean({ description: "close: also remove its worktree and branch." }),
  force: Type.Boolean({ description: "close with removeWorktree: even unlanded work. prune: also unknown worktrees with work." }),
  squash: Type.Boolean({ description: "land: one new commit, not a merge." }),
  stat: Type.Boolean({ description: "diff: files and line counts, no patch." }),
  budget: Type.Unsafe<Record<string, number>>({
    ...budget,
    description: "start, delegate (shared by its tasks): the most to spend; [budget_exceeded] stops the turn.",
  }),
} satisfies Record<string, TSchema>;

export type FieldName = keyof typeof FIELDS;

/** The shared fields an action takes, in the order given: the order its refusals list them. */
export function fieldsOf(...names: FieldName[]): Record<string, TSchema> {
  return Object.fromEntries(names.map((n) => [n, FIELDS[n]]));
}
