import { existsSync, lstatSync, statSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { AgentDefinition } from "../ports/types.ts";
import { parseAgentFile } from "./parse.ts";

export type AgentScope = "user" | "project" | "both";

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface Discovery {
  agents: AgentDefinition[];
  skipped: SkippedFile[];
  /** The project agent directories that were read, in precedence order. */
  projectDirs: string[];
}

export interface DiscoverOptions {
  cwd: string;
  scope: AgentScope;
  agentDir: string;
  bundledDir: string;
  home?: string;
  /**
   * pi-shepherd's trust rule for the project (src/project-trust.ts). Unless true, the project's
   * agent directories are not read at all, only named in `skipped`.
   */
  projectTrusted?: boolean;
}

export const UNTRUSTED = "project agents not read: pi-shepherd does not trust this project (/shepherd trust shows its files and asks you)";

/** How a project definition is named when a user or bundled one has its name: never in that one's place. */
export const PROJECT_PREFIX = "project:";

const PROJECT_SUBDIRS = [join(".pi", "agents"), join(".agents", "agents")];

function isDir(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A `.git` (directory, or file of a worktree) marks a repository root only when it and the
 * directory holding it are the user's own: anyone can create `/tmp/.git`. git itself refuses
 * such a repository since CVE-2022-24765.
 */
function isOwnRepoRoot(dir: string, uid: number | undefined): boolean {
  try {
    const git = lstatSync(join(dir, ".git"));
    return uid === undefined || (git.uid === uid && statSync(dir).uid === uid);
  } catch {
    return false;
  }
}

function within(dir: string, ancestor: string): boolean {
  const rel = relative(ancestor, dir);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The directories a project scope may come from, cwd first: up to and including the nearest
 * repository root; with no repository, up to and including home when cwd is under it, else cwd
 * alone. Whichever of repository root and home comes first ends the walk, so a directory other
 * users can write to (such as /tmp) never lends its agents to a cwd below it. `uid` is the user
 * whose repositories count (no check where the platform has no uids).
 */
export function projectWalk(cwd: string, home: string, uid: number | undefined = process.getuid?.()): string[] {
  const start = resolve(cwd);
  const top = resolve(home);
  // A home of "/" (some service accounts) bounds nothing.
  const underHome = dirname(top) !== top && within(start, top);
  const walked: string[] = [];
  for (let dir = start; ; ) {
    walked.push(dir);
    if (isOwnRepoRoot(dir, uid)) return walked;
    if (underHome && dir === top) return walked;
    const parent = dirname(dir);
    if (parent === dir) return [start]; // outside home and outside any repository
    dir = parent;
  }
}

/**
 * The agent directories of the nearest directory of the project walk that has any: its
 * `.pi/agents`, then its `.agents/agents`. A directory further up never mixes in, so a
 * sub-project's agents are not overridden by its parent's.
 */
export function projectAgentDirs(cwd: string, userDirs: readonly string[], home: string = homedir()): string[] {
  const mine = new Set(userDirs.map((d) => resolve(d)));
  for (const dir of projectWalk(cwd, home)) {
    // ~/.agents/agents is the user's own scope, not a project's
    const found = PROJECT_SUBDIRS.map((sub) => join(dir, sub)).filter((d) => isDir(d) && !mine.has(resolve(d)));
    if (found.length) return found;
  }
  return [];
}

async function readScope(dir: string, source: AgentDefinition["source"], out: Discovery): Promise<AgentDefinition[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".md")).sort();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") out.skipped.push({ path: dir, reason: `directory cannot be read: ${code ?? String(e)}` });
    return [];
  }
  const found: AgentDefinition[] = [];
  for (const n of names) {
    const path = join(dir, n);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (e) {
      out.skipped.push({ path, reason: `cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}` });
      continue;
    }
    const parsed = parseAgentFile(text, path, source);
    if (!parsed.ok) {
      out.skipped.push({ path, reason: parsed.reason });
      continue;
    }
    // Two files of one directory claiming a name is a mistake, not an override: say which lost.
    const twin = found.find((a) => a.name === parsed.definition.name);
    if (twin) out.skipped.push({ path, reason: `name "${twin.name}" is already defined in ${twin.path}` });
    else found.push(parsed.definition);
  }
  return found;
}

/**
 * Reads agent definitions fresh from disk. The first definition of a name wins, in the order user
 * (`<agentDir>/agents`, `~/.agents/agents`), bundled; a project's definition keeps its name only
 * where neither has it, and is otherwise `project:<name>`: a repository's `scout` never answers to
 * the name of the bundled one (names cannot hold ":", so the two never meet).
 */
export async function discoverAgents(o: DiscoverOptions): Promise<Discovery> {
  const out: Discovery = { agents: [], skipped: [], projectDirs: [] };
  const home = o.home ?? homedir();
  const userDirs = [...new Set([join(o.agentDir, "agents"), join(home, ".agents", "agents")].map((d) => resolve(d)))];
  const user: AgentDefinition[][] = [];
  const project: AgentDefinition[][] = [];
  const withUser = o.scope === "user" || o.scope === "both";
  // The user's names are read in every scope, so a project definition has one name whatever the scope.
  const scratch: Discovery = { agents: [], skipped: [], projectDirs: [] };
  for (const dir of userDirs) user.push(await readScope(dir, "user", withUser ? out : scratch));
  if (o.scope === "project" || o.scope === "both") {
    for (const dir of projectAgentDirs(o.cwd, userDirs, home)) {
      if (o.projectTrusted !== true) {
        out.skipped.push({ path: dir, reason: UNTRUSTED });
        continue;
      }
      out.projectDirs.push(dir);
      project.push(await readScope(dir, "project", out));
    }
  }
  const bundled = await readScope(o.bundledDir, "bundled", out);
  const taken = new Set([...user.flat(), ...bundled].map((a) => a.name));
  const named = project.map((g) => g.map((a) => (taken.has(a.name) ? { ...a, name: `${PROJECT_PREFIX}${a.name}` } : a)));
  // Listed user, project, bundled; the names above decide which definition answers to which name.
  const seen = new Set<string>();
  for (const g of [...(withUser ? user : []), ...named, bundled]) {
    for (const a of g) {
      if (seen.has(a.name)) continue;
      seen.add(a.name);
      out.agents.push(a);
    }
  }
  return out;
}
