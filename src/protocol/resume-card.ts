/**
 * `resume.json` beside a sheep's session file: the index by which a closed sheep is found and
 * resumed, even after its record fell out of state.json (64 closed are kept) or its shepherd
 * let it go. Read back, it is hostile until checked: its session path becomes pi's --session,
 * so it must be a session file inside the sheep directories and nowhere else.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isWellFormedId } from "../core/ids.ts";
import { labelProblem } from "../core/labels.ts";
import type { AgentDefinition, ResumeCard } from "../core/types.ts";
import { jsonValue, readJsonBoundedSync } from "./bounded-read.ts";
import { sheepDir, sheepLayout, stateDir } from "./layout.ts";

const SOURCES = ["user", "project", "bundled"];
const plainWord = (x: unknown) => typeof x === "string" && x !== "" && x.length <= 256 && !x.startsWith("-") && !/[\s\u0000-\u001f\u007f]/.test(x);
const isString = (x: unknown) => typeof x === "string";

function definitionOf(v: unknown): AgentDefinition | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const d = v as Record<string, unknown>;
  if (!plainWord(d.name) || !isString(d.description) || !SOURCES.includes(d.source as string) || !isString(d.path)) return undefined;
  if (d.tools !== undefined && !(Array.isArray(d.tools) && d.tools.every(plainWord))) return undefined;
  if ((d.model !== undefined && !plainWord(d.model)) || (d.thinking !== undefined && !plainWord(d.thinking))) return undefined;
  if (d.systemPrompt !== undefined && !isString(d.systemPrompt)) return undefined;
  return d as unknown as AgentDefinition;
}

/** The card of `agentId` as written in its directory, if it is well-formed and its session still exists. */
export function readResumeCard(agentDir: string, agentId: string): ResumeCard | undefined {
  if (!isWellFormedId(agentId, "agent")) return undefined;
  const c = jsonValue(readJsonBoundedSync<Record<string, unknown>>(sheepLayout(sheepDir(agentDir, agentId)).resume, "resume"));
  if (typeof c !== "object" || c === null || c.agentId !== agentId) return undefined;
  if (!plainWord(c.agent) || typeof c.label !== "string" || labelProblem(c.label) || !isString(c.cwd) || !isString(c.createdAt)) return undefined;
  if (c.model !== undefined && !plainWord(c.model)) return undefined;
  if (c.resumedFrom !== undefined && !(typeof c.resumedFrom === "string" && isWellFormedId(c.resumedFrom, "agent"))) return undefined;
  const definition = definitionOf(c.definition);
  if (!definition) return undefined;
  // Only the session file of some sheep directory, named by a well-formed id: never a path of the card's choosing.
  const owner = typeof c.sessionPath === "string" ? /\/(a_[0-9a-z]{10})\/session\.jsonl$/.exec(c.sessionPath)?.[1] : undefined;
  if (!owner || c.sessionPath !== sheepLayout(sheepDir(agentDir, owner)).session || !existsSync(c.sessionPath)) return undefined;
  return c as unknown as ResumeCard;
}

/** Every usable card under the agent dir, oldest first. */
export function readResumeCards(agentDir: string): ResumeCard[] {
  let ids: string[];
  try {
    ids = readdirSync(join(stateDir(agentDir), "sheep"));
  } catch {
    return [];
  }
  return ids
    .map((id) => readResumeCard(agentDir, id))
    .filter((c): c is ResumeCard => c !== undefined)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}
