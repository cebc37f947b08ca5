import { ShepherdError } from "../domain/errors.ts";
import { booleanText } from "../actions/checks.ts";
import type { Params } from "../actions/spec.ts";
import { ACTIONS, type Action, parameterNames } from "./schema.ts";

export type { Params } from "../actions/spec.ts";
export { booleanText, optionalBoolean, optionalEnum, optionalNumber, optionalString, promptIdsOf, requireString } from "../actions/checks.ts";

/** The schema's array parameters: models send any of them as JSON text now and then. */
const ARRAY_KEYS = parameterNames("array");
/** Numbers and booleans a model may send as text ("30", "true"). */
const NUMBER_KEYS = parameterNames("number");
const BOOLEAN_KEYS = parameterNames("boolean");

function parseJson(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/**
 * An array sent as text, bare or already wrapped: pi turns a string given for an array into a
 * one-element array before any check, so `"[\"p_1\",\"p_2\"]"` arrives as one element, and
 * wrapped task objects then fail pi's own item check before the tool ever runs.
 */
function lenientArray(key: string, v: unknown): unknown {
  const wrapped = Array.isArray(v) && v.length === 1 && typeof v[0] === "string";
  const text: unknown = wrapped ? (v as string[])[0] : v;
  if (typeof text !== "string") return v;
  const parsed = parseJson(text);
  if (Array.isArray(parsed)) return parsed;
  // Ids are nanoids (no commas), so a comma only ever separates ids.
  if (key === "promptIds" && typeof parsed === "string")
    return parsed
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  return wrapped ? v : parsed;
}

function withLenientArrays(raw: Params): Params {
  const out: Params = { ...raw };
  for (const k of ARRAY_KEYS) if (out[k] !== undefined) out[k] = lenientArray(k, out[k]);
  return out;
}

function objectOf(raw: unknown): Params | undefined {
  const v = typeof raw === "string" ? parseJson(raw) : raw;
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Params) : undefined;
}

/**
 * Runs before pi checks the arguments against the schema (the tool's `prepareArguments`): only
 * there can an array of task objects sent as JSON text still be saved. Never throws; what it
 * cannot make sense of goes on unchanged to pi's check.
 */
export function prepareArguments(raw: unknown): unknown {
  const obj = objectOf(raw);
  return obj ? withLenientArrays(obj) : raw;
}

/** Models sometimes send arrays, numbers and booleans as JSON text: accept and convert them. */
export function coerce(raw: unknown): Params {
  const obj = objectOf(raw);
  if (!obj) throw new ShepherdError("invalid_params", "parameters must be a JSON object with an action.");
  const out = withLenientArrays(obj);
  for (const k of NUMBER_KEYS) {
    if (typeof out[k] === "string" && (out[k] as string).trim() !== "" && Number.isFinite(Number(out[k]))) out[k] = Number(out[k]);
  }
  for (const k of BOOLEAN_KEYS) if (k in out) out[k] = booleanText(out[k]);
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
