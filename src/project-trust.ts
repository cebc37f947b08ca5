/**
 * pi-shepherd's own trust in a project: the person's explicit decision, kept in a private file of
 * the agent dir. pi's answer (ctx.isProjectTrusted) cannot serve alone: pi asks only when `.pi/`
 * holds resources pi itself knows, and answers "trusted" for every other project, where nobody was
 * asked (and after a /reload it may even save that answer as a decision of its own). So pi's "no"
 * is kept, and its "yes" counts for nothing here.
 */
import { readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { isRecord } from "./domain/guards.ts";
import { ensurePrivateDir, writeJsonAtomic } from "./protocol/files.ts";
import { stateDir } from "./protocol/layout.ts";

export type TrustDecision = "trusted" | "untrusted";

export interface RecordedDecision {
  decision: TrustDecision;
  /** ISO time the person decided. */
  at: string;
}

export interface ProjectTrust {
  trusted: boolean;
  /** The project's real path: what a decision is recorded for. */
  project: string;
  /** Why, in words a person can act on. */
  reason: string;
  recorded?: RecordedDecision;
}

/** `/shepherd trust` records the person's decisions here; nothing else writes it. */
export function trustFilePath(agentDir: string): string {
  return join(stateDir(agentDir), "trust.json");
}

/** A decision is for a real path: a symlink or a `..` cannot stand in for another project. */
export function projectKey(cwd: string): string {
  try {
    return realpathSync(resolve(cwd));
  } catch {
    return resolve(cwd);
  }
}

/** A file far larger than any list of decisions is not one: it is treated as holding none. */
const MAX_TRUST_FILE = 1 << 20;

/**
 * The recorded decisions; none when the file is missing, too large or not of our shape (a damaged
 * file trusts nothing). Read synchronously: a few hundred bytes, read again for every call, since
 * the person may decide in between.
 */
function readDecisions(agentDir: string): Map<string, RecordedDecision> {
  const out = new Map<string, RecordedDecision>();
  let data: unknown;
  try {
    const text = readFileSync(trustFilePath(agentDir), "utf8");
    if (text.length > MAX_TRUST_FILE) return out;
    data = JSON.parse(text);
  } catch {
    return out;
  }
  if (!isRecord(data) || !isRecord(data.projects)) return out;
  for (const [project, d] of Object.entries(data.projects)) {
    if (isRecord(d) && (d.decision === "trusted" || d.decision === "untrusted") && typeof d.at === "string") {
      out.set(project, { decision: d.decision, at: d.at });
    }
  }
  return out;
}

/**
 * The one rule every edge (the tool, /shepherd, completions, the doctor, settings) asks: a project
 * is trusted only when pi does not refuse it and the person trusted it with /shepherd trust.
 * `pi` is pi's own answer where this pi has one.
 */
export function projectTrust(o: { agentDir: string; cwd: string; pi?: boolean }): ProjectTrust {
  const project = projectKey(o.cwd);
  const recorded = readDecisions(o.agentDir).get(project);
  const base = { project, ...(recorded ? { recorded } : {}) };
  if (o.pi === false) return { ...base, trusted: false, reason: "pi does not trust this project (pi's /trust, or --no-approve)" };
  if (recorded?.decision === "trusted") return { ...base, trusted: true, reason: `you trusted it with /shepherd trust (${recorded.at})` };
  if (recorded?.decision === "untrusted") return { ...base, trusted: false, reason: `you declined to trust it with /shepherd trust (${recorded.at})` };
  return { ...base, trusted: false, reason: "nobody has decided to trust it for pi-shepherd (/shepherd trust asks you)" };
}

/** Writes the person's decision for this project (the file 0600, its directory 0700). */
export async function recordTrustDecision(agentDir: string, cwd: string, decision: TrustDecision, now: Date = new Date()): Promise<RecordedDecision> {
  await ensurePrivateDir(stateDir(agentDir));
  const projects: Record<string, RecordedDecision> = Object.fromEntries(readDecisions(agentDir));
  const recorded = { decision, at: now.toISOString() };
  projects[projectKey(cwd)] = recorded;
  await writeJsonAtomic(trustFilePath(agentDir), { projects });
  return recorded;
}
