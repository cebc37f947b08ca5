import type { AgentStatus, EgressReport } from "../ports/types.ts";
import type { AgentId } from "../domain/ids.ts";
import type { DispatchContext } from "../context/context.ts";
import type { ShownStatus } from "../texts/format.ts";

/** A sheep's status with its host's state, when that host does not answer now. */
export function withHost(ctx: DispatchContext, s: AgentStatus): ShownStatus {
  const down = s.host !== undefined ? ctx.hosts?.down(s.host) : undefined;
  return down ? { ...s, hostDown: down } : s;
}

/**
 * A sandboxed sheep's status with the counts of its egress log (read where it runs). A log that
 * cannot be read now leaves the status as it is: the status is what was asked for.
 */
export async function withEgress(ctx: DispatchContext, s: ShownStatus): Promise<ShownStatus> {
  if (!s.sandboxed || s.hostDown) return s;
  let r: EgressReport | undefined;
  try {
    r = await ctx.shepherd.egress(s.agentId as AgentId, 0);
  } catch {
    return s;
  }
  // No log yet: it has tried nothing.
  if (!r) return { ...s, egress: { allowed: 0, refused: 0, bytesUp: 0, bytesDown: 0 } };
  return { ...s, egress: { allowed: r.allowed, refused: r.refused, bytesUp: r.bytesUp, bytesDown: r.bytesDown, ...(r.since ? { since: r.since } : {}) } };
}
