import { Delegation, type DelegateTask } from "../core/delegate.js";
import { ShepherdError } from "../core/errors.js";
import type { ToolCommand } from "./command.js";
import { definitionPicker } from "./definitions.js";
import type { DispatchContext } from "./dispatch.js";
import { resolveCwd } from "./cwd.js";
import { delegateOutcome, delegateText } from "./delegate-text.js";

export async function delegateAction(cmd: Extract<ToolCommand, { action: "delegate" }>, ctx: DispatchContext) {
  const { settings } = ctx;
  const { mode, tasks: list } = cmd;
  if (list.length > settings.maxTasks) {
    throw new ShepherdError("invalid_params", `${list.length} tasks given; at most ${settings.maxTasks} are allowed (setting "maxTasks").`);
  }
  const scope = cmd.agentScope ?? settings.agentScope;
  const confirm = cmd.confirmProjectAgents ?? true;
  const keepOpen = cmd.keepOpen ?? false;
  const baseCwd = resolveCwd(ctx.cwd, cmd.cwd);
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
