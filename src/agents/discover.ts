import { existsSync, statSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { AgentDefinition } from "../core/types.js";
import { parseAgentFile } from "./parse.js";

export type AgentScope = "user" | "project" | "both";

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface Discovery {
  agents: AgentDefinition[];
  skipped: SkippedFile[];
  /** The project agent directories that were looked at, nearest first. */
  projectDirs: string[];
}

export interface DiscoverOptions {
  cwd: string;
  scope: AgentScope;
  agentDir: string;
  bundledDir: string;
  home?: string;
}

/** The nearest ancestor of cwd (itself included) that has the given sub-directory. */
function nearest(cwd: string, sub: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, sub);
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

async function readScope(dir: string, source: AgentDefinition["source"], out: Discovery): Promise<AgentDefinition[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".md")).sort();
  } catch {
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
    if (parsed.ok) found.push(parsed.definition);
    else out.skipped.push({ path, reason: parsed.reason });
  }
  return found;
}

/**
 * Reads agent definitions fresh from disk. Precedence: the first definition of a name wins, in
 * the order user, project, bundled.
 */
export async function discoverAgents(o: DiscoverOptions): Promise<Discovery> {
  const out: Discovery = { agents: [], skipped: [], projectDirs: [] };
  const groups: AgentDefinition[][] = [];
  if (o.scope === "user" || o.scope === "both") {
    groups.push(await readScope(join(o.agentDir, "agents"), "user", out));
    groups.push(await readScope(join(o.home ?? homedir(), ".agents", "agents"), "user", out));
  }
  if (o.scope === "project" || o.scope === "both") {
    for (const sub of [join(".pi", "agents"), join(".agents", "agents")]) {
      const dir = nearest(o.cwd, sub);
      if (!dir || out.projectDirs.includes(dir)) continue;
      // ~/.agents/agents is the user's own scope, not a project's
      if (resolve(dir) === resolve(join(o.home ?? homedir(), ".agents", "agents"))) continue;
      out.projectDirs.push(dir);
      groups.push(await readScope(dir, "project", out));
    }
  }
  groups.push(await readScope(o.bundledDir, "bundled", out));
  const seen = new Set<string>();
  for (const g of groups) {
    for (const a of g) {
      if (seen.has(a.name)) continue;
      seen.add(a.name);
      out.agents.push(a);
    }
  }
  return out;
}
