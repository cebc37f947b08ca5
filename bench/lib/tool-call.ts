/**
 * One whole tool call of a real pi in RPC mode, timed by its own tool_execution_start/end events
 * as the bench receives them. Any tool: the shepherd's, or the example subagent's.
 */
import type { RpcShepherd, ToolOutcome } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { epochNow } from "./clock.ts";

export interface TimedCall {
  outcome: ToolOutcome;
  startAt: number;
  endAt: number;
  ms: number;
}

type Event = { type: string; toolName?: unknown; toolCallId?: unknown; isError?: unknown; result?: unknown };

export async function timedCall(rpc: RpcShepherd, tool: string, args: Record<string, unknown>, timeoutMs = 120_000): Promise<TimedCall> {
  const of = (type: string) => (e: Event) => e.type === type && e.toolName === tool;
  const start = rpc.next(of("tool_execution_start"), timeoutMs).then(() => epochNow());
  const end = rpc.next(of("tool_execution_end"), timeoutMs).then((e) => ({ e: e as Event, at: epochNow() }));
  // The turn ends after the tool: the next call must not land in this one's turn.
  const settled = rpc.next((e) => e.type === "agent_end", timeoutMs);
  const accepted = await rpc.command({ type: "prompt", message: directive({ tool: { name: tool, arguments: args }, afterTool: "done" }) });
  if (accepted.success !== true) throw new Error(`prompt refused: ${JSON.stringify(accepted)}`);
  const startAt = await start;
  const { e, at: endAt } = await end;
  await settled;
  const result = e.result as { content?: { text?: string }[]; details?: Record<string, unknown> } | undefined;
  const outcome: ToolOutcome = {
    isError: e.isError === true,
    text: (result?.content ?? []).map((c) => c.text ?? "").join(""),
    details: result?.details ?? {},
    updates: [],
  };
  if (outcome.isError) throw new Error(`${tool} ${String(args.action ?? "")} failed: ${outcome.text}`);
  return { outcome, startAt, endAt, ms: endAt - startAt };
}
