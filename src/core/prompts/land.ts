/** Landing an isolated sheep's work in the user's checkout, only when nothing can be lost. */
import type { Landed } from "../../ports/workspace.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { activePrompt, refresh } from "./ledger.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord } from "../../ports/types.ts";

export interface LandOutcome extends Landed {
  agentId: string;
  label: string;
}

export async function land(herd: Herd, agentId: unknown, o: { squash: boolean }): Promise<LandOutcome> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("land", rec, () => landRecord(herd, rec, o));
}

async function landRecord(herd: Herd, rec: AgentRecord, o: { squash: boolean }): Promise<LandOutcome> {
  if (rec.owner !== herd.opts.owner) {
    throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may land its work.`);
  }
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace) {
    throw new ShepherdError(
      "invalid_params",
      `sheep ${rec.agentId} (${rec.label}) has no worktree of its own (it was not isolated, or its worktree was removed): its changes, if any, are already in its cwd ${rec.cwd}.`,
    );
  }
  const worktree = rec.worktree;
  // One operation on a sheep at a time: no prompt can reach it, and no close remove its worktree, while it lands.
  return herd.exclusive(rec.agentId, async () => {
    // A sheep still writing would land half its work.
    if (rec.state !== "closed" && activePrompt(herd, rec)) await refresh(herd, rec);
    const active = rec.state !== "closed" ? activePrompt(herd, rec) : undefined;
    if (active) {
      throw new ShepherdError("prompt_pending", `sheep ${rec.agentId} (${rec.label}) is still working on ${active.promptId}; wait for it, then land.`);
    }
    if (rec.worktree !== worktree)
      throw new ShepherdError("invalid_params", `the worktree of ${rec.agentId} (${rec.label}) was removed; there is nothing to land.`);
    const landed = await workspace.land(worktree, { squash: o.squash, label: rec.label });
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
