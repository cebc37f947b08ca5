import type { AgentStatus } from "../ports/types.ts";
import type { DispatchContext } from "../context/context.ts";
import type { ShownStatus } from "../texts/format.ts";

/** A sheep's status with its host's state, when that host does not answer now. */
export function withHost(ctx: DispatchContext, s: AgentStatus): ShownStatus {
  const down = s.host !== undefined ? ctx.hosts?.down(s.host) : undefined;
  return down ? { ...s, hostDown: down } : s;
}
