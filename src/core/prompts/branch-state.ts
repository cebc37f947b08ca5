/** Where an isolated sheep's branch stands (ahead, behind, conflicts, landed): read only, never waits on the sheep. */
import type { AgentId } from "../../domain/ids.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { BranchState } from "../../ports/workspace.ts";
import type { Herd } from "../herd/herd.ts";
import { findRecord } from "../herd/owners.ts";

/** Undefined where the sheep's machine cannot tell; refused for a sheep with no worktree of its own. */
export async function branchState(herd: Herd, agentId: AgentId): Promise<BranchState | undefined> {
  const rec = await findRecord(herd, agentId);
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace) {
    throw new ShepherdError(
      "invalid_params",
      `sheep ${rec.agentId} (${rec.label}) has no worktree of its own (it was not isolated, or its worktree was removed): it has no branch to compare.`,
    );
  }
  return workspace.branchState?.(rec.worktree);
}
