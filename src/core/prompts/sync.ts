/**
 * Syncing an isolated sheep's worktree with the user's branch, never while it works; and telling
 * the sheep, with its next prompt, which files a merge left in conflict there.
 */
import type { Synced } from "../../ports/workspace.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { activePrompt, refresh } from "./ledger.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord } from "../../ports/types.ts";

export interface SyncOutcome extends Synced {
  agentId: string;
  label: string;
}

export async function sync(herd: Herd, agentId: unknown): Promise<SyncOutcome> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("sync", rec, () => syncRecord(herd, rec));
}

async function syncRecord(herd: Herd, rec: AgentRecord): Promise<SyncOutcome> {
  if (rec.owner !== herd.opts.owner) {
    throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may sync its worktree.`);
  }
  const { workspace } = herd.opts;
  if (!rec.worktree || !workspace) {
    throw new ShepherdError(
      "invalid_params",
      `sheep ${rec.agentId} (${rec.label}) has no worktree of its own (it was not isolated, or its worktree was removed): it works in ${rec.cwd} itself, where your branch already is.`,
    );
  }
  const worktree = rec.worktree;
  // One operation on a sheep at a time, as for land: no prompt reaches it and no close removes its worktree meanwhile.
  return herd.exclusive(rec.agentId, async () => {
    // A merge under a sheep that is writing would mix its half-done work with it.
    if (rec.state !== "closed" && activePrompt(herd, rec)) await refresh(herd, rec);
    const active = rec.state !== "closed" ? activePrompt(herd, rec) : undefined;
    if (active) {
      throw new ShepherdError("prompt_pending", `sheep ${rec.agentId} (${rec.label}) is still working on ${active.promptId}; wait for it, then sync.`);
    }
    if (rec.worktree !== worktree)
      throw new ShepherdError("invalid_params", `the worktree of ${rec.agentId} (${rec.label}) was removed; there is nothing to sync.`);
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
