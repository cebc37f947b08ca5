import { ShepherdError } from "../domain/errors.ts";
import type { ToolResult } from "../actions/result.ts";

export { boundedText, result, type ToolResult } from "../actions/result.ts";
import { actionSpec } from "../actions/table.ts";
import { parseToolCommand, type ToolCommand } from "./command.ts";
import type { DispatchContext } from "../context/context.ts";

/** Raw parameters parsed once, then routed; for callers that hold a composed shepherd (tests). */
export async function dispatch(raw: unknown, ctx: DispatchContext): Promise<ToolResult> {
  const cmd = parseToolCommand(raw);
  if (cmd.action === "doctor") throw new ShepherdError("invalid_params", 'action "doctor" runs through the tool\'s entry (src/edge/entry.ts).');
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
  // Each action runs from its module (actions/<action>.ts).
  const spec = actionSpec(cmd.action);
  if (!spec.run) throw new ShepherdError("invalid_params", `action "${cmd.action}" has no run.`);
  return spec.run(cmd, ctx);
}
