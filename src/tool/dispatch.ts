import { ShepherdError } from "../domain/errors.ts";
import { result, type ToolResult } from "../actions/result.ts";

export { boundedText, result, type ToolResult } from "../actions/result.ts";
import { actionSpec } from "../actions/table.ts";
import { delegateAction } from "./delegate-action.ts";
import { sheepText, startText } from "./format.ts";
import { parseToolCommand, type ToolCommand } from "./command.ts";
import { discoverFor } from "./definitions.ts";
import { startAction } from "./start-action.ts";
import type { DispatchContext } from "./context.ts";

/** Raw parameters parsed once, then routed; for callers that hold a composed shepherd (tests). */
export async function dispatch(raw: unknown, ctx: DispatchContext): Promise<ToolResult> {
  const cmd = parseToolCommand(raw);
  if (cmd.action === "doctor") throw new ShepherdError("invalid_params", 'action "doctor" runs through the tool\'s entry (src/tool/entry.ts).');
  return execute(cmd, ctx);
}

/** A command that needs the composed shepherd: every one but doctor, which must work without one. */
export type ShepherdCommand = Exclude<ToolCommand, { action: "doctor" }>;

/**
 * Runs one checked command; the /shepherd command and the panel build the same commands. What the
 * core does for it says which edge it came from (the model's tool unless the context says).
 */
export function execute(cmd: ShepherdCommand, ctx: DispatchContext): Promise<ToolResult> {
  return ctx.shepherd.actingFrom(ctx.edge ?? "tool", () => run(cmd, ctx));
}

async function run(cmd: ShepherdCommand, ctx: DispatchContext): Promise<ToolResult> {
  const { settings } = ctx;
  const { action } = cmd;
  // Each action runs from its module (actions/<action>.ts); start, sheep and delegate still here.
  const spec = actionSpec(action);
  if (spec.run) return spec.run(cmd, ctx);
  switch (cmd.action) {
    case "start": {
      const started = await startAction(cmd, ctx);
      return result(action, startText(started), { agent: started });
    }
    case "sheep": {
      // Lists agent definitions, not running sheep (that is "herd"); the name is the contract's.
      const scope = cmd.agentScope ?? settings.agentScope;
      const found = await discoverFor(ctx, scope);
      const agents = found.agents.map((a) => ({
        name: a.name,
        description: a.description,
        source: a.source,
        path: a.path,
        ...(a.model ? { model: a.model } : {}),
        ...(a.tools ? { tools: a.tools } : {}),
      }));
      return result(action, sheepText(found.agents, found.skipped), { agents, skipped: found.skipped, scope });
    }
    case "delegate": {
      const { text, details } = await delegateAction(cmd, ctx);
      return result(action, text, details);
    }
    default:
      throw new ShepherdError("invalid_params", `action "${action}" has no run.`);
  }
}
