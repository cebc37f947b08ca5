/** Which provider and model a sheep's pi talks to: its own "provider/id", else pi's defaults (the agent dir's settings.json). */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function modelOf(model: string | undefined, agentDir: string): { provider?: string; id?: string } {
  if (model?.includes("/")) {
    const at = model.indexOf("/");
    return { provider: model.slice(0, at), id: model.slice(at + 1) };
  }
  const settings = readJson(join(agentDir, "settings.json"));
  const provider = typeof settings?.defaultProvider === "string" ? settings.defaultProvider : undefined;
  const id = model ?? (typeof settings?.defaultModel === "string" ? settings.defaultModel : undefined);
  return { ...(provider !== undefined ? { provider } : {}), ...(id !== undefined ? { id } : {}) };
}

/** A small JSON object file of the user's, or nothing (a missing, huge or broken file tells nothing). */
export function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const text = readFileSync(path, "utf8");
    if (text.length > 1_000_000) return undefined;
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
