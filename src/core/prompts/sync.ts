/**
 * Syncing an isolated sheep's worktree with the user's branch, never while it works; and telling
 * the sheep, with its next prompt, which files a merge left in conflict there.
 */
import type { AgentId } from "../../domain/ids.ts";
import type { Synced } from "../../ports/workspace.ts";
import type { Herd } from "../herd/herd.ts";
import { onIdleWorktree } from "./idle-worktree.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord } from "../../ports/types.ts";

export interface SyncOutcome extends Synced {
  agentId: string;
  label: string;
}

export async function sync(herd: Herd, agentId: AgentId): Promise<SyncOutcome> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("sync", rec, () => syncRecord(herd, rec));
}

async function syncRecord(herd: Herd, rec: AgentRecord): Promise<SyncOutcome> {
  const texts = {
    verb: "sync",
    notOwned: "sync its worktree",
    noWorktree: `it works in ${rec.cwd} itself, where your branch already is.`,
  };
  return onIdleWorktree(herd, rec, texts, async (worktree, workspace) => {
    const synced = await workspace.sync(worktree, { label: rec.label });
    // A sync changes the sheep's branch and worktree: the user's commit and what came in are recorded.
    if (synced.synced) {
      herd.audit({ event: "sync", agentId: rec.agentId, label: rec.label, branch: synced.branch, commit: synced.fromCommit, fileCount: synced.fileCount });
    }
    return { agentId: rec.agentId, label: rec.label, ...synced };
  });
}

/**
 * A prompt to an isolated sheep whose worktree holds unresolved merge conflicts (a sync's) starts
 * with a line naming them, so the sheep resolves them before its task. It is read from git each
 * time, not remembered: it holds across reloads, and ends when the conflicts do. Without a
 * worktree, or when git cannot say, the prompt goes as it was written.
 */
export async function withConflictNote(herd: Herd, rec: AgentRecord, message: string): Promise<string> {
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace) return message;
  const open = await workspace.conflicts(rec.worktree).catch(() => []);
  if (open.length === 0) return message;
  // A file name is the repository's text: one with a newline or an escape in it is quoted, so it cannot reshape the note.
  const shown =
    open
      .slice(0, 50)
      .map((p) => (/[\u0000-\u001f\u007f-\u009f]/.test(p) ? JSON.stringify(p) : p))
      .join(", ") + (open.length > 50 ? ` and ${open.length - 50} more` : "");
  return `[pi-shepherd] Your worktree has a merge in progress (your shepherd synced its branch into yours) with conflicts in: ${shown}. Resolve them first: edit out the conflict markers (<<<<<<<, =======, >>>>>>>), then git add them and git commit to finish the merge.\n\n${message}`;
}
