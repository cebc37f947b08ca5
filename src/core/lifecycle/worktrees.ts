/**
 * Isolated sheep's worktrees: made at start, kept after close unless removal is asked for, and
 * never removed while they hold work that was not landed, unless forced.
 */
import type { IsolateRequest, Isolated, WorktreeState } from "../../ports/workspace.ts";
import { errorText, ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import type { AgentRecord } from "../../ports/types.ts";

export function isolate(herd: Herd, o: IsolateRequest): Promise<Isolated> {
  const ws = herd.opts.workspace;
  if (!ws) throw new ShepherdError("not_a_repository", "this shepherd has no git support, so it cannot give a sheep a worktree; start it without isolate.");
  return ws.isolate({ ...o, owner: herd.opts.owner });
}

/** What a worktree holds that removing it would lose, in words; undefined when nothing. */
export function unlandedWork(state: WorktreeState): string | undefined {
  const parts: string[] = [];
  if (state.uncommitted.length > 0) {
    const shown = state.uncommitted.slice(0, 10).join(", ");
    parts.push(`uncommitted changes (${shown}${state.uncommitted.length > 10 ? ", …" : ""})`);
  }
  if (state.unlanded) parts.push("commits that are not in your checkout");
  return parts.length ? parts.join(" and ") : undefined;
}

/** Before anything is closed: removing a worktree that holds work needs force. */
export async function guardRemoval(herd: Herd, rec: AgentRecord, force: boolean): Promise<void> {
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace || force) return;
  const why = unlandedWork(await workspace.inspect(rec.worktree));
  if (!why) return;
  throw new ShepherdError(
    "dirty_worktree",
    `the worktree of ${rec.agentId} (${rec.label}) at ${rec.worktree.path} (branch ${rec.worktree.branch}) has ${why}; nothing was closed. Land it first (action "land"), close without removeWorktree to keep it, or pass force: true to discard it.`,
  );
}

/** Removes the sheep's worktree and branch; without force only while they hold nothing. */
export async function removeWorktree(herd: Herd, rec: AgentRecord, force: boolean): Promise<boolean> {
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace) return false;
  if (!force && unlandedWork(await workspace.inspect(rec.worktree))) return false;
  await workspace.remove(rec.worktree);
  delete rec.worktree;
  return true;
}

/**
 * Prune's rule for a sheep that is gone: its worktree goes only when it holds nothing; otherwise
 * it stays, and so does the record that leads to it. Returns why it stays.
 */
export async function tidyWorktree(herd: Herd, rec: AgentRecord): Promise<string | undefined> {
  const { workspace } = herd.opts;
  if (!rec.worktree) return undefined;
  if (!workspace) return "this shepherd has no git support to check it";
  try {
    const why = unlandedWork(await workspace.inspect(rec.worktree));
    if (why) return why;
    await workspace.remove(rec.worktree);
    delete rec.worktree;
    return undefined;
  } catch (e) {
    return errorText(e);
  }
}
