/**
 * The base URL(s) a sheep's model is reached at, read the way pi 1.6 composes them (its
 * provider-composer): a model defined in the agent dir's models.json takes its own `baseUrl`, else
 * its provider's there, else the built-in model's; a built-in model takes the provider's `baseUrl`
 * of models.json where one is set (not for `oauth: "radius"`), else its own from pi-ai's catalogue.
 * Never guessed: a provider or model found nowhere gives no URL, and the sheep reaches no model.
 * Where pi's ModelRegistry is at hand (the extension's context), `find(provider, id).baseUrl` is
 * the same answer; this reads files so a remote host's server can answer it too.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

interface ModelJson {
  id?: unknown;
  baseUrl?: unknown;
}
interface ProviderJson {
  baseUrl?: unknown;
  oauth?: unknown;
  models?: unknown;
}

/** A built-in provider's models with their base URLs (tests and remote hosts may give their own). */
export type BuiltinModels = (provider: string) => Promise<{ id: string; baseUrl: string }[]>;

const MAX_FILE = 4 * 1024 * 1024;

async function readJson(path: string): Promise<unknown> {
  try {
    const text = await readFile(path, "utf8");
    return text.length > MAX_FILE ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 && v.length < 2048 ? v : undefined);

/** pi-ai's catalogue of a built-in provider (`dist/providers/data/<provider>.json`, `{ <api>: { "chat:<id>": model } }`). */
export const piAiBuiltinModels: BuiltinModels = async (provider) => {
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(provider)) return [];
  let index: string;
  try {
    index = fileURLToPath(import.meta.resolve("@earendil-works/pi-ai"));
  } catch {
    return [];
  }
  const data = await readJson(join(dirname(index), "providers", "data", `${provider}.json`));
  const out: { id: string; baseUrl: string }[] = [];
  if (!data || typeof data !== "object") return out;
  for (const byApi of Object.values(data as Record<string, unknown>)) {
    if (!byApi || typeof byApi !== "object") continue;
    for (const [key, m] of Object.entries(byApi as Record<string, ModelJson>)) {
      const id = str(m?.id);
      const baseUrl = str(m?.baseUrl);
      if (key.startsWith("chat:") && id && baseUrl) out.push({ id, baseUrl });
    }
  }
  return out;
};

/** The base URLs of `provider`/`modelId` (the model's one; all the provider's distinct ones when no model is named). */
export async function providerBaseUrls(agentDir: string, provider: string, modelId?: string, builtin: BuiltinModels = piAiBuiltinModels): Promise<string[]> {
  const models = (await readJson(join(agentDir, "models.json"))) as { providers?: Record<string, ProviderJson> } | undefined;
  const config = models?.providers && Object.hasOwn(models.providers, provider) ? models.providers[provider] : undefined;
  const defined = Array.isArray(config?.models) ? (config.models as ModelJson[]).filter((m) => str(m?.id)) : [];
  const catalogue = await builtin(provider);
  const providerUrl = str(config?.baseUrl);
  const radius = config?.oauth === "radius";
  const urlOf = (id: string): string | undefined => {
    const own = defined.find((m) => m.id === id);
    if (own) return str(own.baseUrl) ?? providerUrl ?? catalogue.find((m) => m.id === id)?.baseUrl ?? catalogue[0]?.baseUrl;
    const base = catalogue.find((m) => m.id === id);
    if (!base) return undefined;
    return radius ? base.baseUrl : (providerUrl ?? base.baseUrl);
  };
  const ids = modelId !== undefined ? [modelId] : [...new Set([...defined.map((m) => m.id as string), ...catalogue.map((m) => m.id)])];
  return [...new Set(ids.map(urlOf).filter((u): u is string => u !== undefined))];
}
