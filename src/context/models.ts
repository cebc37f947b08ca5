import type { AgentDefinition } from "../ports/types.ts";

/**
 * A model name as the user's aliases (setting `models`, user-only) turn it into what pi's
 * --model takes. "fast:high" is the alias "fast" with pi's thinking suffix kept. A name that is
 * no alias goes to pi unchanged: pi knows its own models and patterns better than we do.
 */
export function resolveModel(name: string, aliases: Readonly<Record<string, string>>): string {
  if (Object.hasOwn(aliases, name)) return aliases[name]!;
  const colon = name.lastIndexOf(":");
  if (colon > 0) {
    const base = name.slice(0, colon);
    const target = Object.hasOwn(aliases, base) ? aliases[base]! : undefined;
    // An alias that already names a thinking level keeps it: two suffixes would be no model.
    if (target !== undefined && !target.includes(":")) return `${target}${name.slice(colon)}`;
  }
  return name;
}

/** The definition with its `model:` resolved through the aliases. */
export function withModelAlias(def: AgentDefinition, aliases: Readonly<Record<string, string>>): AgentDefinition {
  return def.model === undefined ? def : { ...def, model: resolveModel(def.model, aliases) };
}
