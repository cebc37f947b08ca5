/**
 * Answers from a remote host are hostile data: each proxy checks an answer's shape before the
 * core sees it, and one that does not fit is a [protocol_error], never a value taken on trust.
 */
import { ShepherdError } from "../../domain/errors.ts";
import { isWellFormedId } from "../../domain/ids.ts";

export type Guard = (v: unknown) => boolean;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const isString: Guard = (v) => typeof v === "string";
/** An agent id of ours: one that becomes a directory name and a record's key. */
export const isAgentId: Guard = (v) => typeof v === "string" && isWellFormedId(v, "agent");
export const isStrings: Guard = (v) => Array.isArray(v) && v.every((x) => typeof x === "string");
export const optional =
  (g: Guard): Guard =>
  (v) =>
    v === undefined || v === null || g(v);
export const arrayOf =
  (g: Guard): Guard =>
  (v) =>
    Array.isArray(v) && v.every(g);
/** An object whose named fields pass their guards (other fields are the adapter's and left as they are). */
export const fields =
  (spec: Record<string, Guard>): Guard =>
  (v) =>
    isObject(v) && Object.entries(spec).every(([k, g]) => g(v[k]));
export const oneOf =
  (...values: readonly unknown[]): Guard =>
  (v) =>
    values.includes(v);

/** The answer when it fits, else a [protocol_error] naming the method. null (JSON's undefined) becomes undefined. */
export function expect<T>(v: unknown, guard: Guard, method: string, host: string): T {
  if (!guard(v))
    throw new ShepherdError(
      "protocol_error",
      `host "${host}" answered ${method} with something of the wrong shape; deploy this shepherd's bundle there again.`,
    );
  return (v === null ? undefined : v) as T;
}
