/**
 * The mark of a worktree the shepherd made: `<worktrees dir>/.marks/<agentId>.json`, written before
 * `git worktree add` and removed with the worktree. A shepherd killed between making a worktree and
 * recording its sheep leaves a mark that no record knows: that is how doctor finds such a worktree
 * and its branch, and prune removes them.
 */
import { readdir, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import { WORKTREE_BRANCH, type Worktree } from "../ports/workspace.ts";
import { ensurePrivateDir, readJson, writeJsonAtomic } from "../protocol/files.ts";

/** A worktree of ours as its mark says: the sheep it was made for, and the shepherd that made it. */
export interface WorktreeMark {
  agentId: string;
  /** The shepherd (its owner string) that made it: while that one runs, its start may be on its way. */
  owner: string;
  worktree: Worktree;
}

const AGENT_ID = /^a_[A-Za-z0-9_-]{1,64}$/;
const marksDir = (worktreesDir: string) => join(worktreesDir, ".marks");

export async function writeMark(worktreesDir: string, mark: WorktreeMark): Promise<void> {
  await ensurePrivateDir(marksDir(worktreesDir));
  await writeJsonAtomic(join(marksDir(worktreesDir), `${mark.agentId}.json`), mark);
}

/** Removes the mark of the worktree at path, if it is one of ours (at `<worktrees dir>/<agentId>`). */
export async function removeMark(path: string): Promise<void> {
  const agentId = basename(path);
  if (AGENT_ID.test(agentId)) await rm(join(marksDir(dirname(path)), `${agentId}.json`), { force: true });
}

/**
 * Every mark in the worktrees dir that reads as one of ours: the worktree must be where we make it
 * (`<worktrees dir>/<agentId>`) on a branch name we make, whatever the file says.
 */
export async function readMarks(worktreesDir: string): Promise<WorktreeMark[]> {
  const names = await readdir(marksDir(worktreesDir)).catch(() => [] as string[]);
  const out: WorktreeMark[] = [];
  for (const name of names.slice(0, 10_000)) {
    const agentId = name.replace(/\.json$/, "");
    if (!name.endsWith(".json") || !AGENT_ID.test(agentId)) continue;
    const m = await readJson<Partial<WorktreeMark>>(join(marksDir(worktreesDir), name)).catch(() => undefined);
    const wt = m?.worktree;
    if (!m || m.agentId !== agentId || typeof m.owner !== "string" || !wt || typeof wt !== "object") continue;
    if (wt.path !== join(worktreesDir, agentId) || typeof wt.branch !== "string" || !WORKTREE_BRANCH.test(wt.branch)) continue;
    if (typeof wt.repoRoot !== "string" || !isAbsolute(wt.repoRoot) || typeof wt.base !== "string") continue;
    out.push({ agentId, owner: m.owner.slice(0, 200), worktree: { path: wt.path, branch: wt.branch, repoRoot: wt.repoRoot, base: wt.base, leftBehind: 0 } });
  }
  return out;
}
