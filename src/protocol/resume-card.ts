/**
 * The resume card: the index by which a closed sheep is found and resumed, even after its record
 * fell out of state.json (64 closed are kept) or its shepherd let it go. It is the shepherd's,
 * written at prepare into `<stateDir>/cards/<agentId>.json`, never into the sheep's own directory:
 * the sheep writes there, and a card it rewrote would choose the definition (source, tools, system
 * prompt), cwd and session its resume runs with. A `resume.json` in a sheep's directory (an older
 * shepherd's, or the sheep's own) is never read. Read back, a card is still checked, and its
 * session is never a path it names: it is the session file of the sheep its conversation began
 * in, found by following `resumedFrom` back through the cards.
 */
import { existsSync, readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { isWellFormedId } from "../domain/ids.ts";
import { labelProblem } from "../domain/labels.ts";
import type { AgentDefinition, ResumeCard } from "../ports/types.ts";
import { readJsonBoundedSync, jsonValue } from "./bounded-read.ts";
import { cardsDir, sheepDir, sheepLayout } from "./layout.ts";

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
  if (d.sandbox !== undefined && typeof d.sandbox !== "boolean") return undefined;
  return d as unknown as AgentDefinition;
}

/** Longer chains of resumes than anyone makes: past this, a card's chain is taken for a loop. */
const MAX_CHAIN = 256;

function rawCard(agentDir: string, agentId: string): Record<string, unknown> | undefined {
  if (!isWellFormedId(agentId, "agent")) return undefined;
  const c = jsonValue(readJsonBoundedSync<Record<string, unknown>>(sheepLayout(sheepDir(agentDir, agentId)).resume, "resume"));
  return typeof c === "object" && c !== null && !Array.isArray(c) && c.agentId === agentId ? c : undefined;
}

/** The name pi gives a new session file (`<time>_<uuid>.jsonl`), as a card may name it: a plain file name, no path. */
export const SESSION_FILE = /^[0-9A-Za-z][0-9A-Za-z_.-]{0,200}\.jsonl$/;

const resumedFromOf = (c: Record<string, unknown>): string | null | undefined =>
  c.resumedFrom === undefined ? null : typeof c.resumedFrom === "string" && isWellFormedId(c.resumedFrom, "agent") ? c.resumedFrom : undefined;

/**
 * The session file of the sheep whose conversation `agentId` continues: that of the first sheep
 * of its chain of resumes (its own for a sheep that resumed none), by ids only. Undefined when a
 * card of the chain is missing or bad, or the chain loops.
 */
function sessionOf(agentDir: string, agentId: string, card: Record<string, unknown>): string | undefined {
  const seen = new Set([agentId]);
  let id = agentId;
  let c: Record<string, unknown> | undefined = card;
  for (let step = 0; step < MAX_CHAIN; step++) {
    const from = resumedFromOf(c);
    if (from === undefined) return undefined;
    if (from === null) {
      // A sheep that renewed (a fresh conversation in the same pi) runs on a file of pi's naming in its own directory.
      const name = c.sessionFile;
      return typeof name === "string" && SESSION_FILE.test(name) ? join(sheepDir(agentDir, id), name) : sheepLayout(sheepDir(agentDir, id)).session;
    }
    if (seen.has(from)) return undefined;
    seen.add(from);
    id = from;
    c = rawCard(agentDir, id);
    if (!c) return undefined;
  }
  return undefined;
}

/** The card of `agentId`, if it is well-formed and the session it continues still exists. */
export function readResumeCard(agentDir: string, agentId: string): ResumeCard | undefined {
  const c = rawCard(agentDir, agentId);
  if (!c) return undefined;
  if (!plainWord(c.agent) || typeof c.label !== "string" || labelProblem(c.label) || !isString(c.cwd) || !isAbsolute(c.cwd as string) || !isString(c.createdAt))
    return undefined;
  if (c.model !== undefined && !plainWord(c.model)) return undefined;
  const resumedFrom = resumedFromOf(c);
  if (resumedFrom === undefined) return undefined;
  const definition = definitionOf(c.definition);
  if (!definition) return undefined;
  // Derived from the ids, never the path the card names.
  const sessionPath = sessionOf(agentDir, agentId, c);
  if (!sessionPath || !existsSync(sessionPath)) return undefined;
  return {
    agentId,
    agent: c.agent as string,
    label: c.label,
    cwd: c.cwd as string,
    ...(c.model !== undefined ? { model: c.model as string } : {}),
    sessionPath,
    createdAt: c.createdAt as string,
    ...(resumedFrom !== null ? { resumedFrom } : {}),
    definition,
  };
}

/** Every usable card under the agent dir, oldest first. */
export function readResumeCards(agentDir: string): ResumeCard[] {
  let names: string[];
  try {
    names = readdirSync(cardsDir(agentDir));
  } catch {
    return [];
  }
  return names
    .flatMap((name) => (name.endsWith(".json") ? [readResumeCard(agentDir, name.slice(0, -".json".length))] : []))
    .filter((c): c is ResumeCard => c !== undefined)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}
