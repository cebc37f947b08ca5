/**
 * Snapshots of a working tree that change nothing of the user's: a private copy of the index
 * (GIT_INDEX_FILE in a temp directory of our own), `git add --all` into it, `git write-tree`.
 * Unlike `git stash create`, this takes untracked files too; ignored files stay out.
 */
import { existsSync, lstatSync, type Stats } from "node:fs";
import { copyFile, mkdtemp, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { FileChange } from "../ports/workspace.ts";
import { type Git, nulFields, objectId } from "./run.ts";

/**
 * Whether dir or an ancestor holds a `.git`: git finds a working tree no other way once GIT_DIR
 * is dropped from its environment, so without one there is no need to run git at all (a prompt
 * outside git costs a few stat calls, not a process).
 */
function underGit(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return true;
    if (dirname(d) === d) return false;
  }
}

/** The top of the working tree around dir, or undefined when dir is not in one. */
export async function workTreeRoot(git: Git, dir: string): Promise<string | undefined> {
  if (!underGit(dir)) return undefined;
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
    await copyIndex(real, index);
    const env = { GIT_INDEX_FILE: index };
    await git.run(root, ["add", "--all", "--", "."], { env });
    return objectId(await git.value(root, ["write-tree"], { env }), "a tree");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Copies the index and dates the copy a second before the original. git trusts an entry's stat data
 * only when the file is older than the index itself ("racy git"): a copy dated now would make a file
 * rewritten within the same second, at the same size, look unchanged. Dated earlier, such entries
 * are read again, which costs a few reads and misses nothing.
 */
async function copyIndex(real: string, copy: string): Promise<void> {
  let mtimeMs: number;
  try {
    mtimeMs = (await stat(real)).mtimeMs;
    await copyFile(real, copy);
  } catch {
    return; // no index yet: start from an empty one
  }
  const before = new Date(Math.floor(mtimeMs / 1000) * 1000 - 1000);
  await utimes(copy, before, before);
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

/** Tracked paths whose index or file differs from HEAD (both names of a rename), with no bound: land compares them with what it writes. */
export async function changedTracked(git: Git, dir: string): Promise<Set<string>> {
  const out = await git.value(dir, ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=none"]);
  const fields = out.split("\0").filter((f) => f !== "");
  const paths = new Set<string>();
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i]!;
    paths.add(entry.slice(3));
    if (/^[RC]|^.[RC]/.test(entry) && fields[i + 1] !== undefined) paths.add(fields[++i]!);
  }
  return paths;
}

/**
 * What a checkout holds that git does not track and that writing these changes into it would
 * replace: a file, link or directory (with its untracked contents) at a path that comes in new, or a
 * file or link where a new path needs a directory. In a clean checkout such things are ignored
 * files (`.env`, build output): git's own checkout overwrites those without a word, and no copy of
 * them exists anywhere.
 */
export async function untrackedInTheWay(git: Git, root: string, changes: readonly FileChange[]): Promise<string[]> {
  const leaving = new Set(changes.filter((c) => c.status === "deleted").map((c) => c.path));
  const found = new Set<string>();
  const dirs: string[] = [];
  for (const c of changes) {
    if (c.status !== "added") continue;
    const parts = c.path.split("/");
    let blocked = false;
    for (let i = 1; i < parts.length && !blocked; i++) {
      const dir = parts.slice(0, i).join("/");
      const st = lstatOrUndefined(join(root, dir));
      if (!st) break;
      if (st.isDirectory()) continue;
      // A tracked file leaving makes room for the directory; anything else is in the way.
      if (!leaving.has(dir)) found.add(dir);
      blocked = true;
    }
    if (blocked) continue;
    const st = lstatOrUndefined(join(root, c.path));
    if (st?.isDirectory()) dirs.push(c.path);
    else if (st) found.add(c.path);
  }
  for (let i = 0; i < dirs.length; i += 100) {
    const out = await git.value(root, ["ls-files", "-z", "--others", "--", ...dirs.slice(i, i + 100)]);
    for (const p of nulFields(out)) found.add(p);
  }
  return [...found].sort();
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
