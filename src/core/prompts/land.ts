/** Landing an isolated sheep's work in the user's checkout, only when nothing can be lost. */
import type { AgentId } from "../../domain/ids.ts";
import type { Landed } from "../../ports/workspace.ts";
import type { Herd } from "../herd/herd.ts";
import { onIdleWorktree } from "./idle-worktree.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord } from "../../ports/types.ts";

export interface LandOutcome extends Landed {
  agentId: string;
  label: string;
}

export async function land(herd: Herd, agentId: AgentId, o: { squash: boolean; message?: string }): Promise<LandOutcome> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("land", rec, () => landRecord(herd, rec, o));
}

async function landRecord(herd: Herd, rec: AgentRecord, o: { squash: boolean; message?: string }): Promise<LandOutcome> {
  const texts = {
    verb: "land",
    notOwned: "land its work",
    noWorktree: `its changes, if any, are already in its cwd ${rec.cwd}.`,
  };
  return onIdleWorktree(herd, rec, texts, async (worktree, workspace) => {
    const landed = await workspace.land(worktree, {
      squash: o.squash,
      label: rec.label,
      ...(o.message !== undefined ? { message: o.message } : {}),
    });
    herd.audit({
      event: "land",
      agentId: rec.agentId,
      label: rec.label,
      branch: landed.branch,
      into: landed.into,
      ...(landed.commit !== undefined ? { commit: landed.commit } : {}),
      squash: landed.squash,
      landed: landed.landed,
      fileCount: landed.fileCount,
    });
    return { agentId: rec.agentId, label: rec.label, ...landed };
  });
}
