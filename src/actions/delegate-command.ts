/** A delegation's command, checked from its raw fields: one task, parallel tasks or a chain. */
import type { AgentScope } from "../definitions/discover.ts";
import type { DelegateMode } from "../core/delegation/delegate.ts";
import { ShepherdError } from "../domain/errors.ts";
import { isRecord } from "../domain/guards.ts";
import type { Budget } from "../domain/budget.ts";
import { booleanText, budgetField, defined, onlyFields, optionalBoolean, optionalEnum, optionalString } from "./checks.ts";
import type { Params } from "./spec.ts";

const SCOPES = ["user", "project", "both"] as const;

/** The keys of a delegate task object. */
const TASK_FIELDS = ["agent", "task", "cwd", "host", "isolate", "sandbox", "budget"] as const;

export interface RawTask {
  agent: string;
  task: string;
  cwd?: string;
  host?: string;
  isolate?: boolean;
  sandbox?: boolean;
  budget?: Budget;
}

export type DelegateCommand = {
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
  /** The whole delegation's, shared evenly by its tasks. */
  budget?: Budget;
};

export function parseDelegate(p: Params): DelegateCommand {
  const { mode, tasks } = delegateTasks(p);
  return defined<DelegateCommand>({
    action: "delegate",
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
    budget: budgetField(p.budget, "delegate"),
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
    const budget = budgetField(o.budget, where);
    return {
      ...(budget ? { budget } : {}),
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
