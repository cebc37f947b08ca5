/**
 * What land and sync both need first: an isolated sheep of ours whose worktree is still there,
 * held for the one operation (no prompt reaches it, no close removes its worktree meanwhile), and
 * never while it works (its half-done work would land, or be mixed with a merge).
 */
import type { Workspace, Worktree } from "../../ports/workspace.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { activePrompt, refresh } from "./ledger.ts";
import type { AgentRecord } from "../../ports/types.ts";

export interface WorktreeTexts {
  /** "land" or "sync", as the refusals say it. */
  verb: string;
  /** Why a sheep of another shepherd is refused: "land its work". */
  notOwned: string;
  /** What a sheep without a worktree of its own means here, after the colon. */
  noWorktree: string;
}

export async function onIdleWorktree<T>(
  herd: Herd,
  rec: AgentRecord,
  texts: WorktreeTexts,
  fn: (worktree: Worktree, workspace: Workspace) => Promise<T>,
): Promise<T> {
  if (rec.owner !== herd.opts.owner) {
    throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may ${texts.notOwned}.`);
  }
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace) {
    throw new ShepherdError(
      "invalid_params",
      `sheep ${rec.agentId} (${rec.label}) has no worktree of its own (it was not isolated, or its worktree was removed): ${texts.noWorktree}`,
    );
  }
  const worktree = rec.worktree;
  return herd.exclusive(rec.agentId, async () => {
    if (rec.state !== "closed" && activePrompt(herd, rec)) await refresh(herd, rec);
    const active = rec.state !== "closed" ? activePrompt(herd, rec) : undefined;
    if (active) {
      throw new ShepherdError("prompt_pending", `sheep ${rec.agentId} (${rec.label}) is still working on ${active.promptId}; wait for it, then ${texts.verb}.`);
    }
    if (rec.worktree !== worktree)
      throw new ShepherdError("invalid_params", `the worktree of ${rec.agentId} (${rec.label}) was removed; there is nothing to ${texts.verb}.`);
    return fn(worktree, workspace);
  });
}
