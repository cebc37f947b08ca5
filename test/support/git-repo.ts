/**
 * Real git repositories for tests: made in temp directories with git's own CLI, a fixed
 * identity and no signing, whatever the developer's own git config says.
 */
import { execa } from "execa";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

const CONFIG = ["-c", "user.name=Test Person", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"];

/** Runs git in dir as a person would (their identity fixed); returns stdout. */
export async function git(dir: string, ...args: string[]): Promise<string> {
  const r = await execa("git", [...CONFIG, "-C", dir, ...args], { stdin: "ignore", stripFinalNewline: false });
  return String(r.stdout);
}

/** Writes files (relative path -> content), making directories as needed. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
}

/** A repository at dir with these files committed on main. */
export async function makeRepo(dir: string, files: Record<string, string>): Promise<string> {
  await mkdir(dir, { recursive: true });
  await git(dir, "init", "--quiet");
  await writeFiles(dir, files);
  await git(dir, "add", "--all");
  await git(dir, "commit", "--quiet", "-m", "initial");
  return dir;
}

/** `git status --porcelain` with untracked files: "" when the checkout is clean. */
export function status(dir: string): Promise<string> {
  return git(dir, "status", "--porcelain=v1", "--untracked-files=all");
}

/** The worktrees git knows of, as paths. */
export async function worktreeList(dir: string): Promise<string[]> {
  const out = await git(dir, "worktree", "list", "--porcelain", "-z");
  return out
    .split("\0")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice("worktree ".length));
}

export const lines = (n: number, word = "line") => Array.from({ length: n }, (_, i) => `${word} ${i + 1}\n`).join("");
