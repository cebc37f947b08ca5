import matter from "gray-matter";
import type { AgentDefinition } from "../core/types.js";

export type ParseOutcome = { ok: true; definition: AgentDefinition } | { ok: false; reason: string };

/** Names become labels and file names: keep them plain. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function parseAgentFile(text: string, path: string, source: AgentDefinition["source"]): ParseOutcome {
  let fm: Record<string, unknown>;
  let body: string;
  try {
    const parsed = matter(text);
    fm = parsed.data as Record<string, unknown>;
    body = parsed.content;
  } catch (e) {
    return { ok: false, reason: `frontmatter is not valid YAML: ${(e as Error).message.split("\n")[0]}` };
  }
  if (typeof fm.name !== "string" || fm.name.trim() === "") return { ok: false, reason: "missing required field \"name\"" };
  const name = fm.name.trim();
  if (!NAME.test(name) || name.includes("..")) {
    return { ok: false, reason: `name "${name}" is not valid (letters, digits, ".", "_", "-"; no path separators)` };
  }
  if (typeof fm.description !== "string" || fm.description.trim() === "") {
    return { ok: false, reason: "missing required field \"description\"" };
  }
  let tools: string[] | undefined;
  if (typeof fm.tools === "string") tools = fm.tools.split(",").map((t) => t.trim()).filter(Boolean);
  else if (Array.isArray(fm.tools) && fm.tools.every((t) => typeof t === "string")) tools = (fm.tools as string[]).map((t) => t.trim()).filter(Boolean);
  else if (fm.tools !== undefined && fm.tools !== null) return { ok: false, reason: "\"tools\" must be a comma-separated string or a list of names" };
  for (const t of tools ?? []) {
    if (!/^[\w.:-]+$/.test(t) || t.startsWith("-")) return { ok: false, reason: `tool name "${t}" is not valid` };
  }
  for (const key of ["model", "thinking"] as const) {
    const v = fm[key];
    if (v !== undefined && v !== null && (typeof v !== "string" || v.trim() === "" || v.trim().startsWith("-"))) {
      return { ok: false, reason: `"${key}" must be a non-empty string not starting with "-"` };
    }
  }
  const systemPrompt = body.trim();
  return {
    ok: true,
    definition: {
      name,
      description: fm.description.trim(),
      source,
      path,
      ...(tools && tools.length ? { tools } : {}),
      ...(typeof fm.model === "string" ? { model: fm.model.trim() } : {}),
      ...(typeof fm.thinking === "string" ? { thinking: fm.thinking.trim() } : {}),
      ...(systemPrompt ? { systemPrompt } : {}),
    },
  };
}
