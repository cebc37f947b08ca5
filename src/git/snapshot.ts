/**
 * Snapshots of a working tree that change nothing of the user's: a private copy of the index
 * (GIT_INDEX_FILE in a temp directory of our own), `git add --all` into it, `git write-tree`.
 * Unlike `git stash create`, this takes untracked files too; ignored files stay out.
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Git, objectId } from "./run.js";

/** The top of the working tree around dir, or undefined when dir is not in one. */
export async function workTreeRoot(git: Git, dir: string): Promise<string | undefined> {
  const r = await git.run(dir, ["rev-parse", "--show-toplevel"], { ok: [128] }).catch(() => undefined);
  const root = r?.exitCode === 0 ? r.stdout.replace(/\n$/, "") : "";
  return root === "" ? undefined : root;
}

/** HEAD's commit, or undefined in a repository with no commit yet. */
export async function headCommit(git: Git, dir: string): Promise<string | undefined> {
  const r = await git.run(dir, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { ok: [1] });
  return r.exitCode === 0 ? objectId(r.stdout, "HEAD") : undefined;
}

/** A tree object holding the working tree under root as it is now. */
export async function snapshotTree(git: Git, root: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-index-"));
  const index = join(dir, "index");
  try {
    // A copy of the real index carries its stat data, so unchanged files are not read again.
    const real = resolve(root, await git.value(root, ["rev-parse", "--git-path", "index"]));
    await copyFile(real, index).catch(() => undefined); // no index yet: start from an empty one
    const env = { GIT_INDEX_FILE: index };
    await git.run(root, ["add", "--all", "--", "."], { env });
    return objectId(await git.value(root, ["write-tree"], { env }), "a tree");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Paths with uncommitted changes under dir (tracked or untracked, not ignored), at most max. */
export async function uncommittedPaths(git: Git, dir: string, max = 50): Promise<{ paths: string[]; count: number }> {
  const out = await git.value(dir, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none"]);
  const fields = out.split("\0").filter((f) => f !== "");
  const paths: string[] = [];
  let count = 0;
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i]!;
    count++;
    if (paths.length < max) paths.push(entry.slice(3));
    // A rename or copy names its source in the next field.
    if (/^[RC]|^.[RC]/.test(entry)) i++;
  }
  return { paths, count };
}
