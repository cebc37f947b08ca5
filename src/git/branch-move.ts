/**
 * Moving a branch that is checked out, as one named step: the branch moves only from the commit the
 * caller checked (compare-and-swap), only while HEAD still names it, and the index and files then
 * follow. A move cut short (the shepherd killed after the branch moved) leaves an index behind the
 * branch: the reflog entry our move wrote names both ends, so the next land or sync puts it right.
 */
import type { ShepherdError } from "../domain/errors.ts";
import { type Git, objectId } from "./run.ts";
import { snapshotTree } from "./snapshot.ts";

/** The reflog message of every branch move of ours: what tells a cut-short move of ours from anyone's. */
export const MOVE_MARK = "pi-shepherd:";

export type Refuse = (message: string) => ShepherdError;

/** The full ref HEAD names in dir, or "" on a detached HEAD. */
async function headRef(git: Git, dir: string): Promise<string> {
  return (await git.run(dir, ["symbolic-ref", "--quiet", "HEAD"], { ok: [1] })).stdout.replace(/\n$/, "");
}

/** Moves ref from `from` to `to` only if it is still at `from`; false when it is not. */
export async function swapRef(git: Git, repo: string, ref: string, from: string, to: string, why: string): Promise<boolean> {
  const args = ["update-ref", "--no-deref", "-m", `${MOVE_MARK} ${why}`, ref, objectId(to, "a commit"), objectId(from, "a commit")];
  return (await git.run(repo, args, { ok: [1, 128] })).exitCode === 0;
}

/**
 * The branch checked out in repo moves from `from` to `to`, then the index and files follow as a
 * checkout would (paths the move leaves alone keep their local changes). Refuses, with nothing
 * changed, when HEAD no longer names the branch or the branch is no longer at `from`.
 */
export async function moveCheckedOut(git: Git, repo: string, branch: string, from: string, to: string, why: string, refused: Refuse): Promise<void> {
  const ref = `refs/heads/${branch}`;
  const on = async () => headRef(git, repo);
  const now = await on();
  if (now !== ref) throw refused(`your checkout ${repo} is on ${now || "a detached HEAD"} now, not on ${branch} that was checked.`);
  if (!(await swapRef(git, repo, ref, from, to, why)))
    throw refused(`${branch} moved while it was being checked (it was at ${from.slice(0, 10)}); look at it, then run the same again.`);
  // HEAD may have been switched between the look and the move: the files of another branch are never written.
  const after = await on();
  if (after !== ref) {
    await swapRef(git, repo, ref, to, from, `${why} (undone: HEAD moved to ${after || "a detached HEAD"})`);
    throw refused(`your checkout ${repo} switched to ${after || "a detached HEAD"} while ${branch} was being moved; ${branch} was put back.`);
  }
  // read-tree trusts the index's stat data: a file rewritten with the same content must not look changed.
  await git.run(repo, ["update-index", "-q", "--refresh"], { ok: [1] });
  const r = await git.run(repo, ["read-tree", "-m", "-u", from, to], { ok: [128] });
  if (r.exitCode !== 0) {
    await swapRef(git, repo, ref, to, from, `${why} (undone: the files could not follow)`);
    const why2 = r.stderr.trim().split("\n").slice(-3).join(" ").slice(0, 400);
    throw refused(`git could not bring your files in ${repo} along (${why2}); ${branch} was put back.`);
  }
}

/**
 * An index left behind a move of ours (the shepherd was killed after the branch moved, before the
 * index followed) is put right; anything else is left as it is. The last reflog entry of the branch
 * HEAD names must be ours and the index must hold exactly its old tree. Then either the files are
 * what the branch now holds (a sheep's work made a commit: the index alone follows) or they are
 * still the old ones (a land: the files follow as a checkout would). Neither: refuse, naming the fix.
 */
export async function repairLeftIndex(git: Git, dir: string, refused: Refuse): Promise<boolean> {
  const ref = await headRef(git, dir);
  if (ref === "") return false;
  const last = await git.run(dir, ["reflog", "show", "-1", "--format=%H %gs", ref, "--"], { ok: [128] });
  const line = last.stdout.split("\n", 1)[0] ?? "";
  const space = line.indexOf(" ");
  if (last.exitCode !== 0 || !line.slice(space + 1).startsWith(MOVE_MARK)) return false;
  const to = objectId(line.slice(0, space), "a reflog entry");
  const prev = await git.run(dir, ["rev-parse", "--verify", "--quiet", `${ref}@{1}^{commit}`], { ok: [1, 128] });
  if (prev.exitCode !== 0) return false;
  const from = objectId(prev.stdout, "a reflog entry");
  const head = objectId(await git.value(dir, ["rev-parse", "--verify", "HEAD^{commit}"]), "HEAD");
  if (head !== to || from === to) return false;
  // The index at the old tree, no more and no less (diff-index --cached compares the index alone).
  const idx = await git.run(dir, ["diff-index", "--cached", "--quiet", "--no-ext-diff", from, "--"], { ok: [1] });
  if (idx.exitCode !== 0) return false;
  const toTree = objectId(await git.value(dir, ["rev-parse", "--verify", `${to}^{tree}`]), "a tree");
  if ((await snapshotTree(git, dir)) === toTree) {
    await git.run(dir, ["reset", "--quiet", "--no-recurse-submodules"]);
    return true;
  }
  await git.run(dir, ["update-index", "-q", "--refresh"], { ok: [1] });
  const files = await git.run(dir, ["diff-files", "--quiet", "--no-ext-diff", "--"], { ok: [1] });
  if (files.exitCode === 0) {
    const r = await git.run(dir, ["read-tree", "-m", "-u", from, to], { ok: [128] });
    if (r.exitCode === 0) return true;
  }
  throw refused(
    `the index of ${dir} was left at ${from.slice(0, 10)} when the shepherd stopped while moving ${ref.replace(/^refs\/heads\//, "")} to ${to.slice(0, 10)}, and its files are neither: look at them with git -C ${dir} status; when they are what you want, git -C ${dir} reset --quiet makes the index follow the branch.`,
  );
}
