/**
 * The edge: raw tool parameters (or a /shepherd subcommand's) become one typed, checked command
 * per action, here and only here. Dispatch routes commands and never looks at raw fields again.
 */
import type { AgentScope } from "../agents/discover.ts";
import type { DelegateMode } from "../core/delegation/delegate.ts";
import { ShepherdError } from "../domain/errors.ts";
import { isRecord } from "../domain/guards.ts";
import type { DeliverAs } from "../ports/types.ts";
import type { Direction, Placement } from "../ports/runtime.ts";
import { ACTION_TABLE, type Action } from "../actions/table.ts";
import {
  actionOf,
  booleanText,
  coerce,
  optionalBoolean,
  optionalEnum,
  optionalNumber,
  optionalString,
  promptIdsOf,
  requireString,
  type Params,
} from "./params.ts";

const SCOPES = ["user", "project", "both"] as const;
const PLACEMENTS = ["tab", "pane", "workspace"] as const;
const DIRECTIONS = ["right", "down"] as const;
const SOURCES = ["session", "screen"] as const;

/** A commit message, not a document: git takes any length, the log shows it whole. */
const MAX_LAND_MESSAGE = 10_000;
export type ReadSource = (typeof SOURCES)[number];
const DELIVER_AS = ["steer", "followUp"] as const;

export interface RawTask {
  agent: string;
  task: string;
  cwd?: string;
  host?: string;
  isolate?: boolean;
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
    }
  /** A start that continues a closed or exited sheep: its definition, cwd and model come back with it. */
  | {
      action: "start";
      resume: string;
      label?: string;
      placement?: Placement;
      direction?: Direction;
      confirmProjectAgents?: boolean;
    }
  /** `target` is a sheep's id or its live label; dispatch resolves it (Registry.resolve). */
  | { action: "prompt"; target: string; message: string; notify?: boolean; deliverAs?: DeliverAs; requestId?: string }
  | { action: "wait"; promptIds: string[]; timeout?: number }
  | { action: "status"; target: string }
  | { action: "close"; target: string; removeWorktree?: boolean; force?: boolean }
  /** Aborts the sheep's running turn; its prompt settles cancelled and the sheep stays. */
  | { action: "interrupt"; target: string }
  | { action: "diff"; target: string; stat?: boolean }
  | { action: "land"; target: string; squash?: boolean; message?: string }
  /** Merges the user's current branch into an isolated sheep's worktree. */
  | { action: "sync"; target: string }
  | { action: "sheep"; agentScope?: AgentScope }
  | { action: "herd"; all?: boolean }
  /** session: the last `turns` turns from the session file (default); screen: the pane's last `lines`. */
  | { action: "read"; target: string; source: ReadSource; turns?: number; lines?: number }
  /** force: also remove worktrees no record knows that hold work. */
  | { action: "prune"; force?: boolean }
  | { action: "messages"; agentId?: string; unreadOnly?: boolean }
  | { action: "reply"; agentId: string; messageId: string; text: string }
  | { action: "doctor" }
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
    };

type CommandOf<A extends ToolCommand["action"]> = Extract<ToolCommand, { action: A }>;
export type ResumeCommand = Extract<ToolCommand, { resume: string }>;
type NewStartCommand = Exclude<CommandOf<"start">, ResumeCommand>;
/** A command as the checkers return it: each optional field is a value or undefined. */
type Loose<T> = { [K in keyof T]-?: T[K] | undefined };

/** Keeps only the keys whose value is set, so optional fields stay absent rather than undefined. */
function defined<T extends object>(o: Loose<T>): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

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
const TASK_FIELDS = ["agent", "task", "cwd", "host", "isolate"] as const;

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
      });
    }
    case "prompt": {
      const target = requireString(p, "agentId", action);
      const message = p.message;
      if (typeof message !== "string" || message.length === 0) {
        throw new ShepherdError("invalid_params", 'action "prompt" needs "message" (a non-empty string).');
      }
      const requestId = optionalString(p, "requestId");
      if (requestId !== undefined && (requestId.length === 0 || requestId.length > 256)) {
        throw new ShepherdError("invalid_params", '"requestId" must be 1 to 256 characters.');
      }
      return defined<CommandOf<"prompt">>({
        action,
        target,
        message,
        notify: optionalBoolean(p, "notify"),
        deliverAs: optionalEnum(p, "deliverAs", DELIVER_AS),
        requestId,
      });
    }
    case "messages":
      return defined<CommandOf<"messages">>({ action, agentId: optionalString(p, "agentId"), unreadOnly: optionalBoolean(p, "unreadOnly") });
    case "reply": {
      const text = p.text;
      if (typeof text !== "string" || text.length === 0) throw new ShepherdError("invalid_params", 'action "reply" needs "text" (a non-empty string).');
      return { action, agentId: requireString(p, "agentId", action), messageId: requireString(p, "messageId", action), text };
    }
    case "wait":
      return defined<CommandOf<"wait">>({ action, promptIds: promptIdsOf(p), timeout: optionalNumber(p, "timeout", 0, 7 * 24 * 3600) });
    case "status":
    case "interrupt":
      return { action, target: requireString(p, "agentId", action) };
    case "close": {
      const removeWorktree = optionalBoolean(p, "removeWorktree");
      const force = optionalBoolean(p, "force");
      if (force !== undefined && removeWorktree !== true) {
        throw new ShepherdError("invalid_params", '"force" only applies together with "removeWorktree": true.');
      }
      return defined<CommandOf<"close">>({ action, target: requireString(p, "agentId", action), removeWorktree, force });
    }
    case "diff":
      return defined<CommandOf<"diff">>({ action, target: requireString(p, "target", action), stat: optionalBoolean(p, "stat") });
    case "land": {
      const message = optionalString(p, "message");
      if (message !== undefined && (message.length > MAX_LAND_MESSAGE || message.includes("\0")))
        throw new ShepherdError("invalid_params", `land's "message" is a commit message of at most ${MAX_LAND_MESSAGE} characters, with no NUL.`);
      return defined<CommandOf<"land">>({
        action,
        target: requireString(p, "agentId", action),
        squash: optionalBoolean(p, "squash"),
        message,
      });
    }
    case "sync":
      return { action, target: requireString(p, "agentId", action) };
    case "sheep":
      return defined<CommandOf<"sheep">>({ action, agentScope: optionalEnum(p, "agentScope", SCOPES) });
    case "herd":
      return defined<CommandOf<"herd">>({ action, all: optionalBoolean(p, "all") });
    case "read": {
      const source = optionalEnum(p, "source", SOURCES) ?? "session";
      const turns = optionalNumber(p, "turns", 1, 100);
      if (turns !== undefined && source === "screen")
        throw new ShepherdError("invalid_params", '"turns" counts turns of the session file; the screen is read by "lines".');
      return defined<CommandOf<"read">>({ action, target: requireString(p, "target", action), source, turns, lines: optionalNumber(p, "lines", 1, 10_000) });
    }
    case "prune":
      return defined<CommandOf<"prune">>({ action, force: optionalBoolean(p, "force") });
    case "doctor":
      return { action };
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
      });
    }
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
    return {
      agent: o.agent,
      task: o.task,
      ...(typeof o.cwd === "string" ? { cwd: o.cwd } : {}),
      ...(typeof o.host === "string" ? { host: o.host } : {}),
      ...(typeof isolate === "boolean" ? { isolate } : {}),
    };
  };
  if (single) return { mode: "single", tasks: [check({ agent: p.agent, task: p.task }, 'single delegation ("agent" + "task")')] };
  const key = p.tasks !== undefined ? "tasks" : "chain";
  const arr = p[key];
  if (!Array.isArray(arr) || arr.length === 0) throw new ShepherdError("invalid_params", `"${key}" must be a non-empty array of {agent, task, cwd?}.`);
  return { mode: key === "tasks" ? "parallel" : "chain", tasks: arr.map((t, i) => check(t, `${key}[${i}]`)) };
}
