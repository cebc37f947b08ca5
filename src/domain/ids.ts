import { createHash } from "node:crypto";
import { customAlphabet } from "nanoid";

/**
 * Opaque ids with a prefix per kind, so a prompt id passed where an agent id belongs gets a
 * clear error instead of "not found". The alphabet is safe in file names and shell words.
 */
const ALPHABET = "0123456789abcdefghijkmnopqrstuvwxyz";
const body = customAlphabet(ALPHABET, 10);

export type IdKind = "agent" | "prompt" | "steer" | "message" | "delegation" | "interrupt" | "renew";
const prefixes: Record<IdKind, string> = { agent: "a_", prompt: "p_", steer: "s_", message: "m_", delegation: "d_", interrupt: "i_", renew: "r_" };

export function newId(kind: IdKind): string {
  return prefixes[kind] + body();
}

/**
 * The same id for the same parts, every time and in every process: a caller's requestId names
 * one prompt for good, so a prompt re-sent after a crash is recognised by the sheep too.
 */
export function derivedId(kind: IdKind, ...parts: string[]): string {
  const hash = createHash("sha256").update(parts.join("\u0000")).digest();
  let out = "";
  for (let i = 0; i < 10; i++) out += ALPHABET[hash[i]! % ALPHABET.length];
  return prefixes[kind] + out;
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

/** A multiplexer's pane id as records keep it: tmux `%12`, herdr `w1:p3` and kin; never an option (`-t`) or anything a shell would split. */
export const PANE_ID = /^(?!-)[A-Za-z0-9%_:.-]{1,64}$/;
