import { type Budget, parseBudget } from "../domain/budget.ts";
import { errorText } from "../domain/errors.ts";
import { HOST_NAME, LOCAL_HOST } from "../domain/hosts.ts";
import type { AgentDefinition } from "../ports/types.ts";
import { readFrontMatter } from "./frontmatter.ts";

export type ParseOutcome = { ok: true; definition: AgentDefinition } | { ok: false; reason: string };

/** Names become labels and file names: keep them plain. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TOOL = /^[\w.:-]+$/;
/** The levels pi's --thinking accepts; anything else would only fail once the sheep starts. */
const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

function requiredString(fm: Record<string, unknown>, key: string): string | { reason: string } {
  const v = fm[key];
  if (v === undefined || v === null) return { reason: `missing required field "${key}"` };
  if (typeof v !== "string" || v.trim() === "") return { reason: `"${key}" must be a non-empty string` };
  return v.trim();
}

export function parseAgentFile(text: string, path: string, source: AgentDefinition["source"]): ParseOutcome {
  const front = readFrontMatter(text);
  if (!front.ok) return { ok: false, reason: front.reason };
  const fm = front.data;
  const body = front.content;
  const name = requiredString(fm, "name");
  if (typeof name !== "string") return { ok: false, reason: name.reason };
  if (!NAME.test(name) || name.includes("..")) {
    return { ok: false, reason: `name "${name}" is not valid (letters, digits, ".", "_", "-"; no path separators, no "..")` };
  }
  const description = requiredString(fm, "description");
  if (typeof description !== "string") return { ok: false, reason: description.reason };
  let tools: string[] | undefined;
  if (typeof fm.tools === "string")
    tools = fm.tools
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
  else if (Array.isArray(fm.tools) && fm.tools.every((t) => typeof t === "string")) tools = (fm.tools as string[]).map((t) => t.trim()).filter(Boolean);
  else if (fm.tools !== undefined && fm.tools !== null) return { ok: false, reason: '"tools" must be a comma-separated string or a list of names' };
  for (const t of tools ?? []) {
    if (!TOOL.test(t) || t.startsWith("-")) return { ok: false, reason: `tool name "${t}" is not valid` };
  }
  for (const key of ["model", "thinking"] as const) {
    const v = fm[key];
    if (v !== undefined && v !== null && (typeof v !== "string" || v.trim() === "" || v.trim().startsWith("-"))) {
      return { ok: false, reason: `"${key}" must be a non-empty string not starting with "-"` };
    }
  }
  if (typeof fm.thinking === "string" && !THINKING.includes(fm.thinking.trim())) {
    return { ok: false, reason: `"thinking" must be one of ${THINKING.join(", ")}` };
  }
  const isolation = fm.isolation;
  if (isolation !== undefined && isolation !== null && isolation !== "worktree" && isolation !== "none") {
    return { ok: false, reason: '"isolation" must be "worktree" or "none"' };
  }
  const host = fm.host;
  if (host !== undefined && host !== null) {
    // Which machine runs the sheep, and logs in as whom, is the person's choice, never a repository's.
    if (source === "project") return { ok: false, reason: '"host" can only be set in your own agent files, not in a project\'s' };
    if (typeof host !== "string" || !HOST_NAME.test(host)) return { ok: false, reason: '"host" must be a name of the "hosts" setting (or "local")' };
  }
  const sandbox = fm.sandbox;
  if (sandbox !== undefined && sandbox !== null) {
    if (typeof sandbox !== "boolean") return { ok: false, reason: '"sandbox" must be true or false' };
    // A repository may ask for a sandbox, never for less of one.
    if (sandbox === false && source === "project")
      return { ok: false, reason: '"sandbox: false" can only be set in your own agent files, not in a project\'s' };
  }
  // A budget only ever tightens (the tightest of the call's, the delegation's and this one holds),
  // so a repository's agent file may set one too: it cannot loosen anything.
  let budget: Budget | undefined;
  if (fm.budget !== undefined && fm.budget !== null) {
    try {
      budget = parseBudget(fm.budget, "the agent file");
    } catch (e) {
      return { ok: false, reason: errorText(e).replace(/^\[invalid_params\] the agent file: /, "") };
    }
  }
  const systemPrompt = body.trim();
  return {
    ok: true,
    definition: {
      name,
      description,
      source,
      path,
      ...(tools?.length ? { tools } : {}),
      ...(typeof fm.model === "string" ? { model: fm.model.trim() } : {}),
      ...(typeof fm.thinking === "string" ? { thinking: fm.thinking.trim() } : {}),
      ...(isolation === "worktree" ? { isolation: "worktree" as const } : {}),
      ...(typeof host === "string" && host !== LOCAL_HOST ? { host } : {}),
      ...(typeof sandbox === "boolean" ? { sandbox } : {}),
      ...(budget ? { budget } : {}),
      ...(systemPrompt ? { systemPrompt } : {}),
    },
  };
}
