import { tightest } from "../domain/budget.ts";
import type { StartedAgent } from "../ports/types.ts";
import { hostOf, placeOn } from "../context/host-place.ts";
import { definitionPicker, trustFor } from "../context/definition-picker.ts";
import type { DispatchContext } from "../context/context.ts";
import { resolveModel } from "../context/models.ts";
import { approveDefinition } from "../context/trust.ts";
import type { StartCommand } from "./start-command.ts";
import { sandboxWanted } from "../sandbox/settings.ts";

/** A new sheep from a definition, or (with `resume`) a closed one's conversation continued. */
export async function startSheep(cmd: StartCommand, ctx: DispatchContext): Promise<StartedAgent> {
  const { shepherd, settings } = ctx;
  const where = {
    placement: cmd.placement ?? settings.placement,
    direction: cmd.direction ?? settings.direction,
    ...(cmd.label !== undefined ? { label: cmd.label } : {}),
  };
  if ("resume" in cmd) {
    const card = await shepherd.resumable(cmd.resume);
    // The definition is the one the sheep ran with; a project's is approved again, as at any start.
    await approveDefinition(card.definition, cmd.confirmProjectAgents ?? true, trustFor(ctx));
    // A resumed sheep runs where its session file is: on its own host.
    const place = await placeOn(ctx, card.host, card.cwd);
    const sandbox = sandboxWanted(
      settings.sandbox,
      cmd.sandbox ?? card.definition.sandbox,
      cmd.sandbox !== undefined ? "the start" : `agent "${card.definition.name}"`,
    );
    // Reserved last, once nothing else can refuse the start.
    const [budget] = await shepherd.spend.reserve([tightest(cmd.budget, card.definition.budget)]);
    return shepherd.start(
      {
        definition: card.definition,
        ...place,
        ...(card.model !== undefined ? { model: card.model } : {}),
        resume: card,
        ...where,
        ...(sandbox ? { sandbox: true as const } : {}),
        budget: budget!,
      },
      ctx.signal,
    );
  }
  const scope = cmd.agentScope ?? settings.agentScope;
  const definition = await (await definitionPicker(ctx, scope, cmd.confirmProjectAgents ?? true))(cmd.agent);
  // The call's host, else the agent file's; its cwd is a path there.
  const place = await placeOn(ctx, hostOf(cmd.host, definition.host), cmd.cwd);
  // The call decides; without a word from it, the agent file's `isolation: worktree` does.
  const isolate = cmd.isolate ?? definition.isolation === "worktree";
  // The call's word, else the agent file's; either may add a sandbox, neither may remove the user's.
  const sandbox = sandboxWanted(settings.sandbox, cmd.sandbox ?? definition.sandbox, cmd.sandbox !== undefined ? "the start" : `agent "${definition.name}"`);
  // The call's budget and the agent file's: the tightest of both holds. Reserved last, once nothing else can refuse the start.
  const [budget] = await shepherd.spend.reserve([tightest(cmd.budget, definition.budget)]);
  return shepherd.start(
    {
      definition,
      ...place,
      ...where,
      ...(cmd.model !== undefined ? { model: resolveModel(cmd.model, settings.models) } : {}),
      ...(isolate ? { isolate } : {}),
      ...(sandbox ? { sandbox: true as const } : {}),
      budget: budget!,
    },
    ctx.signal,
  );
}
