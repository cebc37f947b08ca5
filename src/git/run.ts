/**
 * Running git: always `git -C <dir> <argv…>` through execa (never a shell), in an environment
 * where no inherited GIT_* variable can point git at another repository, index or program.
 */
import { execa } from "execa";
import { ShepherdError } from "../core/errors.ts";
import { OBJECT_ID } from "../ports/workspace.ts";

/** Identity and the user's own config files are kept; GIT_DIR, GIT_INDEX_FILE, GIT_EXTERNAL_DIFF and kin are not. */
const KEPT = /^GIT_((AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|CONFIG_(GLOBAL|SYSTEM|NOSYSTEM))$/;

/**
 * Settings given to every call. fsmonitor would run a program named in the repository's config
 * on every status and add; the shepherd runs git on its own, unasked, so it never runs one.
 */
const ALWAYS = ["-c", "core.fsmonitor=false", "-c", "core.splitIndex=false"];

export function gitEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && (!k.startsWith("GIT_") || KEPT.test(k))) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: "0",
    // Reads (status, diff) must not take the user's index.lock.
    GIT_OPTIONAL_LOCKS: "0",
    // Paths are given after "--" and must never be read as pathspec magic such as ":(glob)".
    GIT_LITERAL_PATHSPECS: "1",
    LC_ALL: "C",
    LANGUAGE: "",
  };
}

export interface GitCall {
  /** Text for git's stdin. */
  input?: string;
  /** Extra variables for this call only, e.g. GIT_INDEX_FILE for a private index. */
  env?: Record<string, string>;
  /** `-c key=value` pairs for this call only. */
  config?: string[];
  /** Exit codes that are answers, not failures (e.g. 1 from merge-tree: conflicts). */
  ok?: number[];
  /** Write stdout to this (already created, private) file instead of keeping it in memory. */
  stdoutFile?: string;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export class Git {
  private readonly env: Record<string, string>;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.env = gitEnv(env);
  }

  async run(dir: string, args: readonly string[], o: GitCall = {}): Promise<GitResult> {
    const config = (o.config ?? []).flatMap((c) => ["-c", c]);
    const r = await execa("git", [...ALWAYS, ...config, "-C", dir, ...args], {
      env: { ...this.env, ...o.env },
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
      ...(o.input !== undefined ? { input: o.input } : { stdin: "ignore" as const }),
      ...(o.stdoutFile !== undefined ? { stdout: { file: o.stdoutFile, append: true } } : {}),
    });
    const exitCode = r.exitCode ?? -1;
    const stderr = String(r.stderr ?? "");
    if ((r as { code?: string }).code === "ENOENT") {
      throw new ShepherdError("git_error", "git is not installed (or not on PATH); install git to use worktrees and evidence.");
    }
    if (exitCode !== 0 && !(o.ok ?? []).includes(exitCode)) {
      const why = stderr.trim().split("\n").slice(-4).join(" ").slice(0, 600) || `exit code ${exitCode}`;
      throw new ShepherdError("git_error", `git ${args[0]} failed in ${dir}: ${why}`);
    }
    return { stdout: String(r.stdout ?? ""), stderr, exitCode };
  }

  /** stdout with its final newline removed: for commands that print one value. */
  async value(dir: string, args: readonly string[], o: GitCall = {}): Promise<string> {
    return (await this.run(dir, args, o)).stdout.replace(/\n$/, "");
  }
}

/** Splits git's -z output into its NUL-terminated fields. */
export function nulFields(text: string): string[] {
  const parts = text.split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

export function objectId(value: string, what: string): string {
  const v = value.trim();
  if (!OBJECT_ID.test(v)) throw new ShepherdError("git_error", `git gave "${v.slice(0, 80)}" where ${what} (an object id) belongs.`);
  return v;
}
