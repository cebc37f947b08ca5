import { customAlphabet } from "nanoid";

/**
 * Opaque ids with a prefix per kind, so a prompt id passed where an agent id belongs gets a
 * clear error instead of "not found". The alphabet is safe in file names and shell words.
 */
const body = customAlphabet("0123456789abcdefghijkmnopqrstuvwxyz", 10);

export type IdKind = "agent" | "prompt";
const prefixes: Record<IdKind, string> = { agent: "a_", prompt: "p_" };

export function newId(kind: IdKind): string {
  return prefixes[kind] + body();
}

export function idKind(id: string): IdKind | undefined {
  for (const [kind, prefix] of Object.entries(prefixes) as [IdKind, string][]) {
    if (id.startsWith(prefix)) return kind;
  }
  return undefined;
}

/** Ids become directory and file names: accept only what newId can produce. */
export function isWellFormedId(id: string, kind: IdKind): boolean {
  return new RegExp(`^${prefixes[kind]}[0-9a-z]{10}$`).test(id);
}
