/**
 * Where an isolated sheep's branch stands against the branch checked out in the user's checkout:
 * read only, from what land and sync themselves ask (landable, the unmerged paths).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { BranchState, Worktree } from "../ports/workspace.ts";
import { branchTip, landable } from "./merge.ts";
import type { Git } from "./run.ts";
import { headCommit, uncommittedPaths } from "./snapshot.ts";
import { unmergedPaths } from "./sync.ts";
import { checkedBranch, checkedPath } from "./worktree.ts";

async function count(git: Git, repo: string, range: string): Promise<number> {
  const n = Number((await git.value(repo, ["rev-list", "--count", range])).trim());
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

export async function branchState(git: Git, wt: Worktree): Promise<BranchState> {
  const repo = checkedPath(wt.repoRoot);
  const path = checkedPath(wt.path);
  const branch = checkedBranch(wt.branch);
  const exists = existsSync(join(path, ".git"));
  const into = (await git.run(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"], { ok: [1] })).stdout.replace(/\n$/, "") || "HEAD";
  const tip = await branchTip(git, repo, branch);
  const head = await headCommit(git, repo);
  const uncommitted = exists ? (await uncommittedPaths(git, path, 0)).count : 0;
  const conflicts = exists ? await unmergedPaths(git, path) : [];
  if (!tip || !head) return { exists, branch, into, ahead: 0, behind: 0, conflicts, uncommitted, landed: false, worked: uncommitted > 0 };
  // A branch still at the commit it started from holds no commit of the sheep's: nothing was landed, nothing is to land.
  const worked = tip !== wt.base || uncommitted > 0;
  const [ahead, behind, unlanded] = await Promise.all([count(git, repo, `${head}..${tip}`), count(git, repo, `${tip}..${head}`), landable(git, repo, branch)]);
  // Landed: landing would bring nothing more (its commits are in, whether merged or squashed) and nothing waits uncommitted.
  return { exists, branch, into, ahead, behind, conflicts, uncommitted, worked, landed: worked && !unlanded && uncommitted === 0 && conflicts.length === 0 };
}
