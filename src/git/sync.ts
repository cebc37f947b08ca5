/**
 * Bringing the user's branch into an isolated sheep's worktree: a real `git merge` run in the
 * worktree alone, so that conflicts stay where the sheep can resolve them. The user's checkout,
 * index and branches are only read.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ShepherdError } from "../domain/errors.ts";
import { MAX_EVIDENCE_FILES, type Synced, type Worktree } from "../ports/workspace.ts";
import { repairLeftIndex } from "./branch-move.ts";
import { diffTrees } from "./diff.ts";
import { branchTip, isAncestor } from "./merge.ts";
import { type Git, nulFields, objectId } from "./run.ts";
import { headCommit } from "./snapshot.ts";
import { checkedBranch, checkedPath, recordWork } from "./worktree.ts";

const refused = (message: string) => new ShepherdError("sync_refused", `${message} Nothing was changed.`);

/** Paths with unmerged index entries in the worktree, each once. */
export async function unmergedPaths(git: Git, path: string): Promise<string[]> {
  if (!existsSync(join(checkedPath(path), ".git"))) return [];
  const out = await git.value(path, ["ls-files", "-z", "--unmerged"]);
  return [...new Set(nulFields(out).map((l) => l.slice(l.indexOf("\t") + 1)))].sort();
}

/** Whether a merge is in progress in the worktree (MERGE_HEAD exists). */
export async function mergeHead(git: Git, path: string): Promise<string | undefined> {
  const r = await git.run(path, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD^{commit}"], { ok: [1] });
  return r.exitCode === 0 ? objectId(r.stdout, "MERGE_HEAD") : undefined;
}

export async function sync(git: Git, wt: Worktree, o: { label: string }): Promise<Synced> {
  const repo = checkedPath(wt.repoRoot);
  const path = checkedPath(wt.path);
  const branch = checkedBranch(wt.branch);
  if (!existsSync(join(path, ".git"))) throw refused(`the worktree ${path} of sheep "${o.label}" no longer exists.`);
  // The worktree must still be on the sheep's own branch: a merge there must never commit onto a branch of the user's.
  const on = (await git.run(path, ["symbolic-ref", "--quiet", "HEAD"], { ok: [1] })).stdout.replace(/\n$/, "");
  if (on !== `refs/heads/${branch}`) throw refused(`the worktree ${path} is not on the sheep's branch ${branch} (it is on ${on || "a detached HEAD"}).`);
  await repairLeftIndex(git, path, refused);
  if (await mergeHead(git, path)) {
    const open = await unmergedPaths(git, path);
    throw refused(
      `the worktree ${path} already has a merge in progress${open.length ? ` with conflicts in: ${open.slice(0, 20).join(", ")}` : ""}; let the sheep resolve it (edit, git add, git commit) or abort it (git -C ${path} merge --abort), then sync again.`,
    );
  }
  const from = (await git.run(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"], { ok: [1] })).stdout.replace(/\n$/, "") || "HEAD";
  const fromCommit = await headCommit(git, repo);
  if (!fromCommit) throw refused(`your checkout ${repo} has no commit yet.`);
  const tip = await branchTip(git, repo, branch);
  if (!tip) throw refused(`the sheep's branch ${branch} no longer exists.`);

  const base = { from, fromCommit, branch, path };
  const none = { conflicts: [], files: [], fileCount: 0, insertions: 0, deletions: 0 };
  // Already in: nothing to merge, and the sheep's uncommitted files stay as they are.
  if (await isAncestor(git, repo, fromCommit, tip)) return { synced: false, committedWork: false, ...base, ...none };

  // The sheep's uncommitted files become a commit first: the merge then starts from a clean worktree and cannot lose them.
  const work = await recordWork(git, wt, tip, `shepherd: work of sheep "${o.label}", before a sync with ${from}`);
  const message = `Merge ${from} into ${branch} (sync of sheep "${o.label}")`;
  const r = await git.run(
    path,
    [
      "merge",
      "--no-edit",
      "--no-stat",
      "--no-verify",
      "--no-gpg-sign",
      "--no-verify-signatures",
      "--no-autostash",
      "--strategy=ort",
      "-m",
      message,
      fromCommit,
    ],
    { ok: [1] },
  );
  const conflicts = r.exitCode === 0 ? [] : await unmergedPaths(git, path);
  if (r.exitCode !== 0 && conflicts.length === 0) {
    const why = `${r.stdout}\n${r.stderr}`.trim().split("\n").slice(-4).join(" ").slice(0, 600);
    throw new ShepherdError("git_error", `git merge failed in ${path}: ${why}`);
  }
  // What came in: the user's side since the two met (on a clean merge, exactly what the merge changed).
  const files = conflicts.length
    ? await diffTrees(git, repo, objectId(await git.value(repo, ["merge-base", work, fromCommit]), "the merge base"), fromCommit)
    : await diffTrees(git, repo, work, objectId(await git.value(path, ["rev-parse", "--verify", "HEAD^{commit}"]), "HEAD"));
  return {
    synced: true,
    committedWork: work !== tip,
    ...base,
    conflicts,
    files: files.slice(0, MAX_EVIDENCE_FILES),
    fileCount: files.length,
    insertions: files.reduce((s, f) => s + f.insertions, 0),
    deletions: files.reduce((s, f) => s + f.deletions, 0),
  };
}
