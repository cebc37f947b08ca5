/**
 * Running git: always `git -C <dir> <argv…>` through execa (never a shell), in an environment
 * where no inherited GIT_* variable can point git at another repository, index or program, and
 * with settings that keep every program a repository's config names from running.
 */
import { execa } from "execa";
import { existsSync } from "node:fs";
import { ShepherdError } from "../domain/errors.ts";
import { OBJECT_ID } from "../ports/workspace.ts";

/** Identity and the user's own config files are kept; GIT_DIR, GIT_INDEX_FILE, GIT_EXTERNAL_DIFF and kin are not. */
const KEPT = /^GIT_((AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|CONFIG_(GLOBAL|SYSTEM|NOSYSTEM))$/;

/**
 * Settings given to every call. A repository's config (a checkout unpacked from an archive, a
 * shared one, one a sheep wrote) can name programs git runs by itself: an fsmonitor on every status
 * and add, hooks (post-checkout, post-merge, reference-transaction, pre-auto-gc, …), a signing
 * program, a check of signatures, renormalizing merges (which run the filters). The shepherd runs
 * git on its own, unasked, so it runs none of them. Filters and merge drivers are named per driver
 * and cannot be turned off by one fixed setting: see driverOverrides.
 */
export const ALWAYS_CONFIG = [
  "core.fsmonitor=false",
  "core.splitIndex=false",
  // No such directory: git finds no hook at all.
  "core.hooksPath=/dev/null",
  "commit.gpgSign=false",
  "merge.verifySignatures=false",
  "merge.renormalize=false",
  "submodule.recurse=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "core.editor=:",
];
const ALWAYS = ALWAYS_CONFIG.flatMap((c) => ["-c", c]);

/**
 * Commands that never read a working tree's files through attributes nor merge file contents, so
 * no filter or merge driver can run: they skip the look at the config. Anything else is asked.
 */
const NO_CONTENT = new Set(["rev-parse", "symbolic-ref", "merge-base", "var", "config", "commit-tree", "update-ref", "branch", "cat-file", "diff-tree"]);

/** `filter.<name>.…` and `merge.<name>.…`: the drivers a `.gitattributes` line can pick by name. */
const DRIVER_KEYS = "^(filter|merge)\\..+\\.[a-z]+$";

export function gitEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && (!k.startsWith("GIT_") || KEPT.test(k))) env[k] = v;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: "0",
    // ":" is the editor git never starts.
    GIT_EDITOR: ":",
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
  /** Write stdout to this open file (a descriptor the caller made private) instead of keeping it in memory. */
  stdoutFd?: number;
  /**
   * Other working trees the command reads or writes (`worktree remove` looks at one's files): git
   * reads config there in that tree's context (its gitdir, its branch), where an includeIf may name
   * drivers the context of dir does not. Their drivers are turned off too.
   */
  contexts?: readonly string[];
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
    const drivers = NO_CONTENT.has(args[0] ?? "") ? {} : await this.driverOverrides([dir, ...(o.contexts ?? [])]);
    const r = await execa("git", [...ALWAYS, ...config, "-C", dir, ...args], {
      env: { ...this.env, ...drivers, ...o.env },
      extendEnv: false,
      reject: false,
      stripFinalNewline: false,
      ...(o.input !== undefined ? { input: o.input } : { stdin: "ignore" as const }),
      // A descriptor is a stdout execa takes (it hands it to the child as is); its types list only 3 to 9.
      ...(o.stdoutFd !== undefined ? { stdout: o.stdoutFd as 3 } : {}),
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

  /**
   * Every filter and merge driver the repository's own config defines (its `.git/config` and
   * `config.worktree`, with the files they include, as git reads them in each dir's context: an
   * includeIf gitdir:/onbranch: applies in one working tree and not another), turned off for one
   * call. The user's own (global, system) drivers, such as git-lfs, run as the user set them up. The
   * overrides travel as GIT_CONFIG_COUNT/KEY/VALUE, which take a driver's name as it is (a name may
   * hold "=" or spaces, which `-c` cannot), outrank every config file, and reach the git processes
   * the command starts itself. An empty clean, smudge or process command is no filter (and, not
   * required, no failure); a merge driver becomes `exit 1`, which the shell answers without running
   * a program, so the path counts as a conflict.
   */
  private async driverOverrides(dirs: readonly string[]): Promise<Record<string, string>> {
    const fields: string[] = [];
    for (const dir of dirs) {
      if (dir !== dirs[0] && !existsSync(dir)) continue;
      const r = await execa("git", [...ALWAYS, "-C", dir, "config", "--show-scope", "-z", "--get-regexp", DRIVER_KEYS], {
        env: this.env,
        extendEnv: false,
        reject: false,
        stdin: "ignore",
        stripFinalNewline: false,
      });
      fields.push(...nulFields(String(r.stdout ?? "")));
    }
    const overrides: [string, string][] = [];
    const seen = new Set<string>();
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] !== "local" && fields[i] !== "worktree") continue;
      const key = fields[i + 1]!.split("\n", 1)[0]!;
      const section = key.startsWith("filter.") ? "filter" : "merge";
      const name = key.slice(section.length + 1, key.lastIndexOf("."));
      if (name === "" || seen.has(`${section}.${name}`)) continue;
      seen.add(`${section}.${name}`);
      if (section === "filter")
        overrides.push(...["clean", "smudge", "process"].map((k): [string, string] => [`filter.${name}.${k}`, ""]), [`filter.${name}.required`, "false"]);
      else overrides.push([`merge.${name}.driver`, "exit 1"]);
    }
    if (overrides.length === 0) return {};
    const env: Record<string, string> = { GIT_CONFIG_COUNT: String(overrides.length) };
    overrides.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    return env;
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
