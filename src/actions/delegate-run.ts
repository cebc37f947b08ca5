import { type Budget, tightest } from "../domain/budget.ts";
import type { BackgroundStarted } from "../core/async/background.ts";
import { sandboxWanted } from "../sandbox/settings.ts";
import { Delegation, type DelegateTask } from "../core/delegation/delegate.ts";
import { ShepherdError } from "../domain/errors.ts";
import { definitionPicker } from "../context/definition-picker.ts";
import type { DispatchContext } from "../context/context.ts";
import { hostOf, placeOn } from "../context/host-place.ts";
import type { DelegateCommand } from "./delegate-command.ts";
import { delegateOutcome, delegateText } from "./delegate-text.ts";

export async function delegateTasks(cmd: DelegateCommand, ctx: DispatchContext) {
  const { settings } = ctx;
  const { mode, tasks: list } = cmd;
  if (list.length > settings.maxTasks) {
    throw new ShepherdError("invalid_params", `${list.length} tasks given; at most ${settings.maxTasks} are allowed (setting "maxTasks").`);
  }
  const scope = cmd.agentScope ?? settings.agentScope;
  const confirm = cmd.confirmProjectAgents ?? true;
  const keepOpen = cmd.keepOpen ?? false;
  // Everything is resolved and approved before any sheep starts, so a bad name wastes nothing.
  const pick = await definitionPicker(ctx, scope, confirm);
  const tasks: DelegateTask[] = [];
  const bases = new Map<string | undefined, Awaited<ReturnType<typeof placeOn>>>();
  for (const t of list) {
    const definition = await pick(t.agent);
    // The task's host, then the call's, then the agent file's; a task's relative cwd is under the call's cwd on that host.
    const host = hostOf(t.host, cmd.host, definition.host);
    if (!bases.has(host)) bases.set(host, await placeOn(ctx, host, cmd.cwd));
    const place = t.cwd === undefined ? bases.get(host)! : await placeOn(ctx, host, t.cwd, bases.get(host));
    // The task's word, then the call's, then the agent file's `isolation: worktree`.
    const isolate = t.isolate ?? cmd.isolate ?? definition.isolation === "worktree";
    // The same order for the sandbox; none of them may turn off the user's.
    const asked = t.sandbox ?? cmd.sandbox ?? definition.sandbox;
    const who = t.sandbox !== undefined ? "a task" : cmd.sandbox !== undefined ? "the delegation" : `agent "${definition.name}"`;
    const sandbox = sandboxWanted(settings.sandbox, asked, who);
    // Every sheep follows the placement settings, a delegated one as a started one.
    tasks.push({
      definition,
      task: t.task,
      ...place,
      placement: settings.placement,
      direction: settings.direction,
      ...(isolate ? { isolate } : {}),
      ...(sandbox ? { sandbox: true as const } : {}),
    });
  }
  // Every task's budget is reserved at once, before any sheep starts: all fit the day, or none starts.
  const held = await ctx.shepherd.spend.reserve(list.map((t, i) => tightest(t.budget, shareOf(cmd.budget, list.length), tasks[i]!.definition.budget)));
  held.forEach((h, i) => {
    tasks[i]!.budget = h;
  });
  if (cmd.background) {
    const started = await ctx.shepherd.delegateInBackground(mode, tasks, {
      keepOpen,
      maxParallel: settings.maxParallel,
      waitTimeoutSec: settings.waitTimeout,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return { text: backgroundText(started), details: { mode, background: true, delegationId: started.delegationId, items: started.items } };
  }
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

/** A delegation's budget shared evenly by its tasks, so all of them together stay within it. */
function shareOf(b: Budget | undefined, n: number): Budget | undefined {
  if (!b) return undefined;
  const share = (x: number | undefined, whole: boolean) => (x === undefined ? undefined : whole ? Math.max(1, Math.floor(x / n)) : x / n);
  const tokens = share(b.tokens, true);
  const outputTokens = share(b.outputTokens, true);
  const costUsd = share(b.costUsd, false);
  return {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}

/** What a background delegation says when it returns: what runs, what waits, and that the results will come. */
function backgroundText(b: BackgroundStarted): string {
  const lines = b.items.map((i, n) => {
    const state = i.status
      ? `${i.status}${i.error ? `: ${i.error}` : ""}`
      : i.promptId
        ? `working (sheep ${i.agentId}, prompt ${i.promptId})`
        : "waits for its turn";
    return `${n + 1}. ${i.agent}: ${state}`;
  });
  return [
    `Background ${b.mode} delegation ${b.delegationId} started (${b.items.length} task${b.items.length === 1 ? "" : "s"}):`,
    ...lines,
    "One message with every result, in this order, comes to you by itself when the last one is final; go on with other work meanwhile; there is no need to wait for these prompts.",
  ].join("\n");
}
