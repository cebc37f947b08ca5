import type { AgentScope } from "../agents/discover.js";
import { Delegation, delegateOutcome, type DelegateItem, type DelegateMode, type DelegateTask } from "../core/delegate.js";
import { ShepherdError } from "../core/errors.js";
import { optionalBoolean, optionalEnum, optionalString, type Params } from "./params.js";
import { definitionPicker } from "./definitions.js";
import type { DispatchContext } from "./dispatch.js";
import { resolveCwd } from "./cwd.js";

interface RawTask {
  agent: string;
  task: string;
  cwd?: string;
}

function rawTasks(p: Params): { mode: DelegateMode; list: RawTask[] } {
  const single = p.agent !== undefined || p.task !== undefined;
  const given = [single, p.tasks !== undefined, p.chain !== undefined].filter(Boolean).length;
  if (given !== 1) {
    throw new ShepherdError("invalid_params", 'action "delegate" takes exactly one of: "agent" + "task" (single), "tasks" (parallel), "chain".');
  }
  const check = (v: unknown, where: string): RawTask => {
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new ShepherdError("invalid_params", `${where} must be an object {agent, task, cwd?}.`);
    const o = v as Record<string, unknown>;
    if (typeof o.agent !== "string" || o.agent.trim() === "") throw new ShepherdError("invalid_params", `${where} needs "agent" (a non-empty string).`);
    if (typeof o.task !== "string" || o.task.length === 0) throw new ShepherdError("invalid_params", `${where} needs "task" (a non-empty string).`);
    if (o.cwd !== undefined && typeof o.cwd !== "string") throw new ShepherdError("invalid_params", `${where}: "cwd" must be a string.`);
    return { agent: o.agent, task: o.task, ...(typeof o.cwd === "string" ? { cwd: o.cwd } : {}) };
  };
  if (single) return { mode: "single", list: [check({ agent: p.agent, task: p.task }, 'single delegation ("agent" + "task")')] };
  const key = p.tasks !== undefined ? "tasks" : "chain";
  const arr = p[key];
  if (!Array.isArray(arr) || arr.length === 0) throw new ShepherdError("invalid_params", `"${key}" must be a non-empty array of {agent, task, cwd?}.`);
  return { mode: key === "tasks" ? "parallel" : "chain", list: arr.map((t, i) => check(t, `${key}[${i}]`)) };
}

export async function delegateAction(p: Params, ctx: DispatchContext) {
  const { settings } = ctx;
  const { mode, list } = rawTasks(p);
  if (list.length > settings.maxTasks) {
    throw new ShepherdError("invalid_params", `${list.length} tasks given; at most ${settings.maxTasks} are allowed (setting "maxTasks").`);
  }
  const scope = optionalEnum<AgentScope>(p, "agentScope", ["user", "project", "both"]) ?? settings.agentScope;
  const confirm = optionalBoolean(p, "confirmProjectAgents") ?? true;
  const keepOpen = optionalBoolean(p, "keepOpen") ?? false;
  const baseCwd = resolveCwd(ctx.cwd, optionalString(p, "cwd"));
  // Everything is resolved and approved before any sheep starts, so a bad name wastes nothing.
  const pick = await definitionPicker(ctx, scope, confirm);
  const tasks: DelegateTask[] = [];
  for (const t of list) tasks.push({ definition: await pick(t.agent), task: t.task, cwd: resolveCwd(baseCwd, t.cwd) });
  const items = await new Delegation(ctx.shepherd, mode, tasks, {
    keepOpen,
    maxParallel: settings.maxParallel,
    waitTimeoutSec: settings.waitTimeout,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.onProgress ? { onProgress: (pr) => ctx.onProgress!(`${pr.done}/${pr.total} done`, { action: "delegate", mode, progress: pr }) } : {}),
  }).run();
  const { summary } = delegateOutcome(mode, items, list.length);
  return { text: delegateText(mode, items, summary), details: { mode, results: items } };
}

function delegateText(mode: DelegateMode, items: DelegateItem[], summary: string): string {
  const body = (i: DelegateItem) => (i.status === "completed" ? (i.text ?? "") : `${i.status}: ${i.error ?? ""}`);
  if (mode === "single") return body(items[0]!);
  if (mode === "chain") {
    const last = items[items.length - 1]!;
    return `${summary}\n\n${last.status === "completed" ? body(last) : items.map((i) => `## step ${i.step} · ${i.agent} · ${i.status}\n${body(i)}`).join("\n\n")}`;
  }
  return `${summary}\n\n${items.map((i, n) => `## ${n + 1}. ${i.agent} · ${i.status}\n${body(i)}`).join("\n\n")}`;
}
