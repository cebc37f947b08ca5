/**
 * The edge: raw tool parameters (or a /shepherd subcommand's) become one typed, checked command
 * per action, here and only here. Dispatch routes commands and never looks at raw fields again.
 */
import type { AgentScope } from "../agents/discover.ts";
import type { DelegateMode } from "../core/delegation/delegate.ts";
import { ShepherdError } from "../domain/errors.ts";
import { isRecord } from "../domain/guards.ts";
import type { Direction, Placement } from "../ports/runtime.ts";
import { defined } from "../actions/checks.ts";
import type { CloseCommand } from "../actions/close.ts";
import type { DiffCommand } from "../actions/diff.ts";
import type { DoctorCommand } from "../actions/doctor.ts";
import type { HerdCommand } from "../actions/herd.ts";
import type { InterruptCommand } from "../actions/interrupt.ts";
import type { LandCommand } from "../actions/land.ts";
import type { MessagesCommand } from "../actions/messages.ts";
import type { PromptCommand } from "../actions/prompt.ts";
import type { PruneCommand } from "../actions/prune.ts";
import type { ReadCommand } from "../actions/read.ts";
import type { ReplyCommand } from "../actions/reply.ts";
import type { SheepCommand } from "../actions/sheep.ts";
import type { StatusCommand } from "../actions/status.ts";
import type { SyncCommand } from "../actions/sync.ts";
import { ACTION_TABLE, type Action, actionSpec } from "../actions/table.ts";
import type { WaitCommand } from "../actions/wait.ts";
import { actionOf, booleanText, coerce, optionalBoolean, optionalEnum, optionalString, requireString, type Params } from "./params.ts";

const SCOPES = ["user", "project", "both"] as const;
const PLACEMENTS = ["tab", "pane", "workspace"] as const;
const DIRECTIONS = ["right", "down"] as const;
export type { ReadSource } from "../actions/read.ts";

export interface RawTask {
  agent: string;
  task: string;
  cwd?: string;
  host?: string;
  isolate?: boolean;
  sandbox?: boolean;
}

export type ToolCommand =
  | {
      action: "start";
      agent: string;
      label?: string;
      placement?: Placement;
      direction?: Direction;
      cwd?: string;
      host?: string;
      model?: string;
      agentScope?: AgentScope;
      confirmProjectAgents?: boolean;
      isolate?: boolean;
      sandbox?: boolean;
    }
  /** A start that continues a closed or exited sheep: its definition, cwd and model come back with it. */
  | {
      action: "start";
      resume: string;
      label?: string;
      placement?: Placement;
      direction?: Direction;
      confirmProjectAgents?: boolean;
      sandbox?: boolean;
    }
  | PromptCommand
  | WaitCommand
  | StatusCommand
  | CloseCommand
  | InterruptCommand
  | DiffCommand
  | LandCommand
  | SyncCommand
  | SheepCommand
  | HerdCommand
  | ReadCommand
  | PruneCommand
  | MessagesCommand
  | ReplyCommand
  | DoctorCommand
  | {
      action: "delegate";
      mode: DelegateMode;
      tasks: RawTask[];
      agentScope?: AgentScope;
      confirmProjectAgents?: boolean;
      keepOpen?: boolean;
      background?: boolean;
      cwd?: string;
      host?: string;
      isolate?: boolean;
      sandbox?: boolean;
    };

type CommandOf<A extends ToolCommand["action"]> = Extract<ToolCommand, { action: A }>;
export type ResumeCommand = Extract<ToolCommand, { resume: string }>;
type NewStartCommand = Exclude<CommandOf<"start">, ResumeCommand>;
/**
 * The fields each action takes besides `action` (its module's, actions/<action>.ts). The schema is
 * flat (every field of every action in one object), so a field the action does not take (another
 * action's, a typo) is refused here rather than run as if it were not there.
 */
export const ACTION_FIELDS: Record<Action, readonly string[]> = Object.fromEntries(ACTION_TABLE.map((a) => [a.name, Object.keys(a.fields)])) as Record<
  Action,
  string[]
>;

/** The keys of a delegate task object. */
const TASK_FIELDS = ["agent", "task", "cwd", "host", "isolate", "sandbox"] as const;

/** Refuses the first field set in `o` that is not one of `takes`, naming it and what is taken. */
function onlyFields(o: Params, takes: readonly string[], what: string, skip: readonly string[] = []): void {
  for (const key of Object.keys(o)) {
    if (o[key] === undefined || skip.includes(key) || takes.includes(key)) continue;
    const near = takes.find((k) => k.toLowerCase() === key.toLowerCase());
    const hint = near ? ` (did you mean "${near}"?)` : "";
    const list = takes.length ? `it takes ${takes.map((k) => `"${k}"`).join(", ")}` : "it takes no other field";
    throw new ShepherdError("invalid_params", `${what} does not take ${JSON.stringify(key)}${hint}; ${list}.`);
  }
}

/** Parses and checks raw parameters; every problem is `[invalid_params]` naming the field. */
export function parseToolCommand(raw: unknown): ToolCommand {
  const p = coerce(raw);
  const action = actionOf(p);
  onlyFields(p, ACTION_FIELDS[action], `action "${action}"`, ["action"]);
  const spec = actionSpec(action);
  // Each action checks its own fields in its module; start and delegate still here.
  if (spec.parse) return spec.parse(p) as ToolCommand;
  switch (action) {
    case "start": {
      const resume = optionalString(p, "resume");
      if (resume !== undefined) return resumeCommand(p, resume);
      return defined<NewStartCommand>({
        action,
        agent: requireString(p, "agent", action),
        label: optionalString(p, "label"),
        placement: optionalEnum(p, "placement", PLACEMENTS),
        direction: optionalEnum(p, "direction", DIRECTIONS),
        cwd: optionalString(p, "cwd"),
        host: optionalString(p, "host"),
        model: optionalString(p, "model"),
        agentScope: optionalEnum(p, "agentScope", SCOPES),
        confirmProjectAgents: optionalBoolean(p, "confirmProjectAgents"),
        isolate: optionalBoolean(p, "isolate"),
        sandbox: optionalBoolean(p, "sandbox"),
      });
    }
    case "delegate": {
      const { mode, tasks } = delegateTasks(p);
      return defined<CommandOf<"delegate">>({
        action,
        mode,
        tasks,
        agentScope: optionalEnum(p, "agentScope", SCOPES),
        confirmProjectAgents: optionalBoolean(p, "confirmProjectAgents"),
        keepOpen: optionalBoolean(p, "keepOpen"),
        background: optionalBoolean(p, "background"),
        cwd: optionalString(p, "cwd"),
        host: optionalString(p, "host"),
        isolate: optionalBoolean(p, "isolate"),
        sandbox: optionalBoolean(p, "sandbox"),
      });
    }
    default:
      throw new ShepherdError("invalid_params", `action "${action}" has no parser.`);
  }
}

function resumeCommand(p: Params, resume: string): ResumeCommand {
  if (resume.trim() === "") throw new ShepherdError("invalid_params", '"resume" must name a sheep: its agentId or label.');
  for (const key of ["agent", "cwd", "host", "model", "agentScope", "isolate"]) {
    if (p[key] !== undefined) {
      throw new ShepherdError("invalid_params", `"resume" continues a sheep with its own agent definition, cwd and model; leave "${key}" out.`);
    }
  }
  return defined<ResumeCommand>({
    action: "start",
    resume: resume.trim(),
    label: optionalString(p, "label"),
    placement: optionalEnum(p, "placement", PLACEMENTS),
    direction: optionalEnum(p, "direction", DIRECTIONS),
    confirmProjectAgents: optionalBoolean(p, "confirmProjectAgents"),
    sandbox: optionalBoolean(p, "sandbox"),
  });
}

function delegateTasks(p: Params): { mode: DelegateMode; tasks: RawTask[] } {
  const single = p.agent !== undefined || p.task !== undefined;
  const given = [single, p.tasks !== undefined, p.chain !== undefined].filter(Boolean).length;
  if (given !== 1) {
    throw new ShepherdError("invalid_params", 'action "delegate" takes exactly one of: "agent" + "task" (single), "tasks" (parallel), "chain".');
  }
  const check = (v: unknown, where: string): RawTask => {
    if (!isRecord(v)) throw new ShepherdError("invalid_params", `${where} must be an object {agent, task, cwd?}.`);
    const o = v as Record<string, unknown>;
    onlyFields(o, TASK_FIELDS, where);
    if (typeof o.agent !== "string" || o.agent.trim() === "") throw new ShepherdError("invalid_params", `${where} needs "agent" (a non-empty string).`);
    if (typeof o.task !== "string" || o.task.length === 0) throw new ShepherdError("invalid_params", `${where} needs "task" (a non-empty string).`);
    if (o.cwd !== undefined && typeof o.cwd !== "string") throw new ShepherdError("invalid_params", `${where}: "cwd" must be a string.`);
    if (o.host !== undefined && typeof o.host !== "string")
      throw new ShepherdError("invalid_params", `${where}: "host" must be a string (a name of the "hosts" setting).`);
    const isolate = booleanText(o.isolate);
    if (isolate !== undefined && typeof isolate !== "boolean") throw new ShepherdError("invalid_params", `${where}: "isolate" must be true or false.`);
    const sandbox = booleanText(o.sandbox);
    if (sandbox !== undefined && typeof sandbox !== "boolean") throw new ShepherdError("invalid_params", `${where}: "sandbox" must be true or false.`);
    return {
      agent: o.agent,
      task: o.task,
      ...(typeof o.cwd === "string" ? { cwd: o.cwd } : {}),
      ...(typeof o.host === "string" ? { host: o.host } : {}),
      ...(typeof isolate === "boolean" ? { isolate } : {}),
      ...(typeof sandbox === "boolean" ? { sandbox } : {}),
    };
  };
  if (single) return { mode: "single", tasks: [check({ agent: p.agent, task: p.task }, 'single delegation ("agent" + "task")')] };
  const key = p.tasks !== undefined ? "tasks" : "chain";
  const arr = p[key];
  if (!Array.isArray(arr) || arr.length === 0) throw new ShepherdError("invalid_params", `"${key}" must be a non-empty array of {agent, task, cwd?}.`);
  return { mode: key === "tasks" ? "parallel" : "chain", tasks: arr.map((t, i) => check(t, `${key}[${i}]`)) };
}
