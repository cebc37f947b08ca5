import { createHash } from "node:crypto";
import { customAlphabet } from "nanoid";
import { ShepherdError } from "./errors.ts";

/**
 * Opaque ids with a prefix per kind, so a prompt id passed where an agent id belongs gets a
 * clear error instead of "not found". The alphabet is safe in file names and shell words.
 */
const ALPHABET = "0123456789abcdefghijkmnopqrstuvwxyz";
const body = customAlphabet(ALPHABET, 10);

/** A reservation names a sheep's entry in the day's spend ledger before the sheep has an id (spec: Budgets). */
export type IdKind = "agent" | "prompt" | "steer" | "message" | "delegation" | "interrupt" | "renew" | "reservation";
const prefixes: Record<IdKind, string> = {
  agent: "a_",
  prompt: "p_",
  steer: "s_",
  message: "m_",
  delegation: "d_",
  interrupt: "i_",
  renew: "r_",
  reservation: "b_",
};

/** A new id of its kind, typed as its kind's brand where it has one. */
export function newId<K extends IdKind>(kind: K): IdOf<K> {
  return (prefixes[kind] + body()) as IdOf<K>;
}

/**
 * The same id for the same parts, every time and in every process: a caller's requestId names
 * one prompt for good, so a prompt re-sent after a crash is recognised by the sheep too.
 */
export function derivedId<K extends IdKind>(kind: K, ...parts: string[]): IdOf<K> {
  const hash = createHash("sha256").update(parts.join("\u0000")).digest();
  let out = "";
  for (let i = 0; i < 10; i++) out += ALPHABET[hash[i]! % ALPHABET.length];
  return (prefixes[kind] + out) as IdOf<K>;
}

export function idKind(id: string): IdKind | undefined {
  for (const [kind, prefix] of Object.entries(prefixes) as [IdKind, string][]) {
    if (id.startsWith(prefix)) return kind;
  }
  return undefined;
}

/** Ids become directory and file names: accept only what newId can produce. */
export function isWellFormedId<K extends IdKind>(id: string, kind: K): id is IdOf<K> {
  return new RegExp(`^${prefixes[kind]}[0-9a-z]{10}$`).test(id);
}

/** A multiplexer's pane id as records keep it: tmux `%12`, herdr `w1:p3` and kin; never an option (`-t`) or anything a shell would split. */
export const PANE_ID = /^(?!-)[A-Za-z0-9%_:.-]{1,64}$/;

/*
 * Ids as the edges parse them, once: the core's signatures take these brands, so a raw value from
 * a tool call, a command line or a URL cannot reach it unchecked, and the core does not check again.
 * Each parse keeps the refusal its check gave before it moved here.
 */
declare const brand: unique symbol;
type Branded<T extends string> = string & { readonly [brand]: T };

/** What the core looks a sheep up by; whether such a sheep exists is the core's to say. */
export type AgentId = Branded<"AgentId">;
export type PromptId = Branded<"PromptId">;
export type MessageId = Branded<"MessageId">;
type IdOf<K extends IdKind> = K extends "agent" ? AgentId : K extends "prompt" ? PromptId : K extends "message" ? MessageId : string;

const filled = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

export function parseAgentId(v: unknown): AgentId {
  if (!filled(v)) throw new ShepherdError("invalid_params", "agentId must be a non-empty string (an id returned by start).");
  return v as AgentId;
}

export function parsePromptId(v: unknown, key = "promptId"): PromptId {
  if (!filled(v)) throw new ShepherdError("invalid_params", `"${key}" must be a non-empty string.`);
  return v as PromptId;
}

/** The `messageId` of `action`'s parameters: which message of the sheep it is, the core says. */
export function parseMessageId(v: unknown, action: string): MessageId {
  if (!filled(v)) throw new ShepherdError("invalid_params", `action "${action}" needs "messageId" (a non-empty string).`);
  return v as MessageId;
}
