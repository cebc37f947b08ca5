import { ShepherdError } from "../core/errors.js";
import { ACTIONS, type Action } from "./schema.js";

export type Params = Record<string, unknown>;

/** Models sometimes send arrays, numbers and booleans as JSON text: accept and convert them. */
export function coerce(raw: unknown): Params {
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new ShepherdError("invalid_params", "parameters must be a JSON object with an action.");
    }
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ShepherdError("invalid_params", "parameters must be a JSON object with an action.");
  }
  const out: Params = { ...(raw as Params) };
  const parseJson = (v: unknown) => {
    if (typeof v !== "string") return v;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  };
  if (typeof out.promptIds === "string") {
    const v = parseJson(out.promptIds);
    out.promptIds = Array.isArray(v) ? v : typeof v === "string" ? v.split(",").map((s) => s.trim()).filter(Boolean) : v;
  }
  for (const k of ["tasks", "chain"]) {
    if (typeof out[k] === "string") out[k] = parseJson(out[k]);
  }
  for (const k of ["timeout", "lines"]) {
    if (typeof out[k] === "string" && (out[k] as string).trim() !== "" && Number.isFinite(Number(out[k]))) out[k] = Number(out[k]);
  }
  for (const k of ["confirmProjectAgents", "keepOpen", "all"]) {
    if (out[k] === "true") out[k] = true;
    if (out[k] === "false") out[k] = false;
  }
  for (const [k, v] of Object.entries(out)) if (v === null) delete out[k];
  return out;
}

export function actionOf(p: Params): Action {
  const a = p.action;
  if (typeof a !== "string" || !(ACTIONS as readonly string[]).includes(a)) {
    throw new ShepherdError("invalid_params", `action must be one of ${ACTIONS.join(", ")}${a === undefined ? "" : ` (got ${JSON.stringify(a)})`}.`);
  }
  return a as Action;
}

export function requireString(p: Params, key: string, action: string): string {
  const v = p[key];
  if (typeof v !== "string" || v.trim() === "") {
    throw new ShepherdError("invalid_params", `action "${action}" needs "${key}" (a non-empty string).`);
  }
  return v;
}

export function optionalString(p: Params, key: string): string | undefined {
  const v = p[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new ShepherdError("invalid_params", `"${key}" must be a string.`);
  return v;
}

export function optionalEnum<T extends string>(p: Params, key: string, values: readonly T[]): T | undefined {
  const v = p[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) {
    throw new ShepherdError("invalid_params", `"${key}" must be one of ${values.map((x) => `"${x}"`).join(", ")}.`);
  }
  return v as T;
}

export function optionalNumber(p: Params, key: string, min: number, max: number): number | undefined {
  const v = p[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
    throw new ShepherdError("invalid_params", `"${key}" must be a number from ${min} to ${max}.`);
  }
  return v;
}

export function optionalBoolean(p: Params, key: string): boolean | undefined {
  const v = p[key];
  if (v === undefined) return undefined;
  if (typeof v !== "boolean") throw new ShepherdError("invalid_params", `"${key}" must be true or false.`);
  return v;
}

/** Exactly one of promptId and promptIds. */
export function promptIdsOf(p: Params): string[] {
  const one = p.promptId;
  const many = p.promptIds;
  if (one !== undefined && many !== undefined) {
    throw new ShepherdError("invalid_params", 'action "wait" takes either "promptId" or "promptIds", not both.');
  }
  if (one !== undefined) {
    if (typeof one !== "string" || one.trim() === "") throw new ShepherdError("invalid_params", '"promptId" must be a non-empty string.');
    return [one];
  }
  if (many !== undefined) {
    if (!Array.isArray(many) || many.length === 0 || !many.every((x) => typeof x === "string" && x.trim() !== "")) {
      throw new ShepherdError("invalid_params", '"promptIds" must be a non-empty array of promptId strings.');
    }
    return many as string[];
  }
  throw new ShepherdError("invalid_params", 'action "wait" needs "promptId" or "promptIds".');
}
