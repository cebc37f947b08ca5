/**
 * Landing a sheep's work in the user's checkout: everything is checked and built in the object
 * store first (the sheep's uncommitted files as a commit, the merge as a tree); only a clean,
 * conflict-free result moves anything, and the user's branch then moves to it (see branch-move.ts).
 */
import { ShepherdError } from "../domain/errors.ts";
import { shellQuote } from "../runtimes/shell-line.ts";
import { type Landed, MAX_EVIDENCE_FILES, type Worktree } from "../ports/workspace.ts";
import { diffTrees } from "./diff.ts";
import { branchTip, commitTree, isAncestor, mergeTree, treeOf } from "./merge.ts";
import type { Git } from "./run.ts";
import { moveCheckedOut, repairLeftIndex } from "./branch-move.ts";
import { changedTracked, headCommit, untrackedInTheWay } from "./snapshot.ts";
import { mergeHead, unmergedPaths } from "./sync.ts";
import { adoptWork, checkedBranch, checkedPath, workCommit } from "./worktree.ts";

const refused = (message: string) => new ShepherdError("land_refused", `${message} Nothing was changed.`);

/** Words a person can paste into a shell: quoted only where a shell would read something into them. */
const typed = (words: string | readonly string[]) =>
  (typeof words === "string" ? [words] : words).map((w) => (w === "<paths>" || /^[A-Za-z0-9_./:=@%+-]+$/.test(w) ? w : shellQuote(w))).join(" ");

const listed = (paths: readonly string[], count: number) => paths.join(", ") + (count > paths.length ? ` and ${count - paths.length} more` : "");

export interface LandOptions {
  squash: boolean;
  label: string;
  /** The commit message of a merge or squash (a fast-forward makes no commit). */
  message?: string;
}

export async function land(git: Git, wt: Worktree, o: LandOptions): Promise<Landed> {
  const repo = checkedPath(wt.repoRoot);
  const branch = checkedBranch(wt.branch);
  const into = (await git.run(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"], { ok: [1] })).stdout.replace(/\n$/, "");
  if (into === "") throw refused(`your checkout ${repo} is not on a branch (detached HEAD); check out the branch to land into.`);
  await repairLeftIndex(git, repo, refused);
  const head = await headCommit(git, repo);
  if (!head) throw refused(`the branch ${into} in ${repo} has no commit yet.`);
  if (await mergeHead(git, repo))
    throw refused(`your checkout ${repo} has a merge in progress; finish it (git commit) or abort it (git merge --abort), then land again.`);
  const tip = await branchTip(git, repo, branch);
  if (!tip) throw refused(`the sheep's branch ${branch} no longer exists.`);

  // Conflict markers of a sync the sheep has not resolved would land as they are.
  const open = await unmergedPaths(git, wt.path);
  if (open.length > 0) {
    throw refused(
      `the sheep's worktree ${wt.path} has a merge in progress with unresolved conflicts in: ${listed(open.slice(0, 20), open.length)}. Prompt the sheep to resolve them, or by hand: edit them, then ${typed(["git", "-C", wt.path, "add", "--", "<paths>"])} and ${typed(["git", "-C", wt.path, "commit", "--no-edit"])}; then land again.`,
    );
  }
  // The sheep's uncommitted files become a commit on top of its branch (not yet recorded anywhere).
  const work = await workCommit(git, wt, tip, `shepherd: work of sheep "${o.label}"`);
  const nothing: Landed = { landed: false, branch, into, squash: o.squash, files: [], fileCount: 0, insertions: 0, deletions: 0 };
  if (await isAncestor(git, repo, work, head)) return nothing;
  let commit: string;
  const fastForward = !o.squash && (await isAncestor(git, repo, head, work));
  if (fastForward) {
    commit = work; // nothing happened on the user's side: a fast-forward, as git merge would do
  } else {
    const merged = await mergeTree(git, repo, head, work);
    if ("conflicts" in merged) {
      throw refused(
        `landing ${branch} into ${into} conflicts in: ${listed(merged.conflicts.slice(0, 20), merged.conflicts.length)}. Bring ${into} into the sheep's worktree with action "sync" (or /shepherd sync ${typed(o.label)}): the conflicts stay there for the sheep and its next prompt names them; once they are resolved, land again. By hand: ${typed(["git", "-C", wt.path, "merge", head])} (the tip of ${into}), resolve the conflicts, then ${typed(["git", "-C", wt.path, "add", "--", "<paths>"])} and ${typed(["git", "-C", wt.path, "commit", "--no-edit"])}.`,
      );
    }
    if (merged.tree === (await treeOf(git, repo, head))) return nothing;
    const custom = typeof o.message === "string" ? o.message.trim() : "";
    const message = custom || (o.squash ? `shepherd: land sheep "${o.label}" (squash of ${branch})` : `Merge branch '${branch}' (sheep "${o.label}")`);
    commit = await commitTree(git, repo, merged.tree, o.squash ? [head] : [head, work], message);
  }

  // Only what the landing writes over stops it: your changes to other files, and files git does not track elsewhere, stay as they are.
  const files = await diffTrees(git, repo, head, commit);
  const yours = await changedTracked(git, repo);
  const touched = files.map((f) => f.path).filter((p) => yours.has(p));
  if (touched.length > 0) {
    throw refused(
      `your checkout ${repo} has uncommitted changes in files the landing would write: ${listed(touched.slice(0, 20), touched.length)}; commit or stash them, then land again.`,
    );
  }
  // git's checkout would replace ignored files of the user's without a word (untracked ones it refuses).
  const inTheWay = await untrackedInTheWay(git, repo, files);
  if (inTheWay.length > 0) {
    throw refused(
      `landing would overwrite files in your checkout ${repo} that git does not track (ignored or untracked): ${listed(inTheWay.slice(0, 20), inTheWay.length)}; move them out of the way (or commit them), then land again.`,
    );
  }

  // From here on things move: first the sheep's branch (only if nobody moved it meanwhile), then the
  // user's: exactly the branch checked, only from the commit checked.
  await adoptWork(git, wt, tip, work);
  await moveCheckedOut(git, repo, into, head, commit, `land ${branch} into ${into}`, refused);
  // After a squash the sheep goes on from what landed: a later sync or land then brings no merge of
  // the user's branch and no commit of the sheep's from before the squash into the user's history.
  if (o.squash)
    await moveCheckedOut(git, checkedPath(wt.path), branch, work, commit, `${branch} goes on from the squash landed in ${into}`, refused).catch(
      () => undefined,
    );
  return {
    landed: true,
    branch,
    into,
    commit,
    squash: o.squash,
    ...(fastForward ? { fastForward: true } : {}),
    files: files.slice(0, MAX_EVIDENCE_FILES),
    fileCount: files.length,
    insertions: files.reduce((s, f) => s + f.insertions, 0),
    deletions: files.reduce((s, f) => s + f.deletions, 0),
  };
}
