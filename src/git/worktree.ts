/**
 * A sheep's own checkout: `git worktree add` of the user's HEAD on a branch named by us, in a
 * directory of the private state dir, never inside the user's checkout.
 */
import { existsSync, statSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { ShepherdError } from "../domain/errors.ts";
import { ensurePrivateDir } from "../protocol/files.ts";
import { type IsolateRequest, type Isolated, WORKTREE_BRANCH, type Worktree, type WorktreeState } from "../ports/workspace.ts";
import { swapRef } from "./branch-move.ts";
import { removeMark, writeMark } from "./marks.ts";
import { branchTip, commitTree, landable, treeOf } from "./merge.ts";
import { type Git, objectId } from "./run.ts";
import { headCommit, snapshotTree, uncommittedPaths, workTreeRoot } from "./snapshot.ts";

/** `shepherd/<label>-<id>`: the label reduced to letters, digits, "_" and "-", so no ref rule can trip on it. */
export function branchFor(label: string, agentId: string): string {
  const slug = label
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-_]+|[-_]+$/g, "")
    .slice(0, 40)
    .replace(/[-_]+$/, "");
  return checkedBranch(`shepherd/${slug || "sheep"}-${agentId.replace(/^a_/, "")}`);
}

/** Only names we make, so a name read back from a state file can never be an option or a path trick. */
export function checkedBranch(name: string): string {
  if (!WORKTREE_BRANCH.test(name)) throw new ShepherdError("git_error", `"${name.slice(0, 80)}" is not a branch name the shepherd made; refused.`);
  return name;
}

export function checkedPath(path: string): string {
  if (!isAbsolute(path) || path.includes("\0")) throw new ShepherdError("git_error", "a worktree path must be absolute; refused.");
  return path;
}

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

export async function addWorktree(git: Git, o: IsolateRequest & { worktreesDir: string }): Promise<Isolated> {
  const root = await workTreeRoot(git, o.cwd);
  if (!root) {
    throw new ShepherdError(
      "not_a_repository",
      `isolate needs a git repository, and ${o.cwd} is not in one; start the sheep without isolate, or run git init there.`,
    );
  }
  const head = await headCommit(git, root);
  if (!head) throw new ShepherdError("not_a_repository", `the repository at ${root} has no commit yet; commit once, then start an isolated sheep.`);
  // Another repository's worktree has nothing to give this one: the step starts from HEAD then.
  const base = o.from && o.from.repoRoot === root ? await workOf(git, o.from) : head;
  const path = checkedPath(join(o.worktreesDir, o.agentId));
  if (inside(root, path)) {
    throw new ShepherdError(
      "git_error",
      `the shepherd's state directory is inside the repository ${root}; a worktree there would be part of your checkout. Move PI_CODING_AGENT_DIR out of it.`,
    );
  }
  const prefix = await git.value(o.cwd, ["rev-parse", "--show-prefix"]);
  const leftBehind = (await uncommittedPaths(git, root, 0)).count;
  const branch = branchFor(o.label, o.agentId);
  await ensurePrivateDir(o.worktreesDir);
  // Marked before it exists: a shepherd killed from here until its sheep is recorded leaves a mark
  // that no record knows, which doctor reports and prune cleans.
  await writeMark(o.worktreesDir, { agentId: o.agentId, owner: o.owner ?? "", worktree: { path, branch, repoRoot: root, base, leftBehind } });
  // Made without files first: git reads config in the new worktree's own context (its gitdir, the
  // sheep's branch) only once it exists, and an includeIf there may name a filter the checkout's
  // context does not. The files are then written by a git run in that context, its drivers off.
  await git.run(root, ["worktree", "add", "--quiet", "--no-checkout", "-b", branch, "--", path, base]);
  await git.run(path, ["reset", "--hard", "--quiet", "--no-recurse-submodules"]);
  const sub = join(path, prefix);
  const cwd = prefix !== "" && isDir(sub) ? sub.replace(/\/+$/, "") : path;
  return { worktree: { path, branch, repoRoot: root, base, leftBehind }, cwd };
}

/** What another worktree of the same repository holds now, as a commit (see workCommit). */
async function workOf(git: Git, from: Worktree): Promise<string> {
  const branch = checkedBranch(from.branch);
  const tip = await branchTip(git, checkedPath(from.repoRoot), branch);
  if (!tip) throw new ShepherdError("git_error", `the branch ${branch} of the worktree to continue from no longer exists.`);
  return workCommit(git, from, tip, `shepherd: work of ${branch}, continued by the next step`);
}

/**
 * A worktree's work as a commit: its branch's tip when its files are what the tip holds (or the
 * worktree is gone), else a new commit on the tip with its uncommitted files. Made in the object
 * store only: the worktree, its index and its branch stay as they are.
 */
export async function workCommit(git: Git, wt: Worktree, tip: string, message: string): Promise<string> {
  const path = checkedPath(wt.path);
  if (!existsSync(join(path, ".git"))) return tip;
  const repo = checkedPath(wt.repoRoot);
  const tree = await snapshotTree(git, path);
  // A merge the sheep resolved but did not commit (after a sync) keeps its second parent.
  const merging = await git.run(path, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD^{commit}"], { ok: [1] });
  const parents = merging.exitCode === 0 ? [tip, objectId(merging.stdout, "MERGE_HEAD")] : [tip];
  if (parents.length === 1 && tree === (await treeOf(git, repo, tip))) return tip;
  return commitTree(git, repo, tree, parents, message);
}

/**
 * The worktree's work made a commit on its branch for real: the branch moves to it (only if nobody
 * moved it meanwhile) and the worktree's index follows, so it reads clean; its files are already
 * what was committed. A merge in progress there ends with it (its MERGE_HEAD is the second parent).
 */
export async function recordWork(git: Git, wt: Worktree, tip: string, message: string): Promise<string> {
  const work = await workCommit(git, wt, tip, message);
  await adoptWork(git, wt, tip, work);
  return work;
}

/** Moves the worktree's branch from tip to work (a commit of workCommit's), its index following. */
export async function adoptWork(git: Git, wt: Worktree, tip: string, work: string): Promise<void> {
  if (work === tip) return;
  const branch = checkedBranch(wt.branch);
  if (!(await swapRef(git, checkedPath(wt.repoRoot), `refs/heads/${branch}`, tip, work, `work of ${branch} made a commit`)))
    throw new ShepherdError("git_error", `the sheep's branch ${branch} moved while its work was being committed; nothing was changed.`);
  await git.run(checkedPath(wt.path), ["reset", "--quiet"]);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export async function inspectWorktree(git: Git, wt: Worktree): Promise<WorktreeState> {
  const path = checkedPath(wt.path);
  const exists = existsSync(join(path, ".git"));
  const uncommitted = exists ? (await uncommittedPaths(git, path)).paths : [];
  return { exists, uncommitted, unlanded: await landable(git, wt.repoRoot, checkedBranch(wt.branch)) };
}

/** Removes the worktree (whatever it holds) and its branch; what is already gone is fine. */
export async function removeWorktree(git: Git, wt: Worktree): Promise<void> {
  const path = checkedPath(wt.path);
  const branch = checkedBranch(wt.branch);
  const repo = checkedPath(wt.repoRoot);
  if (existsSync(path)) await git.run(repo, ["worktree", "remove", "--force", "--", path], { contexts: [path] });
  else await git.run(repo, ["worktree", "prune"]);
  await git.run(repo, ["branch", "-D", "--", branch], { ok: [1] });
  await removeMark(path);
}
