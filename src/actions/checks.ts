/** The checks of one field each: every refusal is `[invalid_params]` and names the field. */
import { ShepherdError } from "../domain/errors.ts";
import { type Budget, parseBudget } from "../domain/budget.ts";
import { type PromptId, parsePromptId } from "../domain/ids.ts";
import type { Params } from "./spec.ts";

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
export function promptIdsOf(p: Params): PromptId[] {
  const one = p.promptId;
  const many = p.promptIds;
  if (one !== undefined && many !== undefined) {
    throw new ShepherdError("invalid_params", 'action "wait" takes either "promptId" or "promptIds", not both.');
  }
  if (one !== undefined) {
    return [parsePromptId(one)];
  }
  if (many !== undefined) {
    if (!Array.isArray(many) || many.length === 0 || !many.every((x) => typeof x === "string" && x.trim() !== "")) {
      throw new ShepherdError("invalid_params", '"promptIds" must be a non-empty array of promptId strings.');
    }
    return many.map((x) => parsePromptId(x, "promptIds"));
  }
  throw new ShepherdError("invalid_params", 'action "wait" needs "promptId" or "promptIds".');
}

/** A command as the checkers return it: each optional field is a value or undefined. */
export type Loose<T> = { [K in keyof T]-?: T[K] | undefined };

/** Keeps only the keys whose value is set, so optional fields stay absent rather than undefined. */
export function defined<T extends object>(o: Loose<T>): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Refuses the first field set in `o` that is not one of `takes`, naming it and what is taken. */
export function onlyFields(o: Params, takes: readonly string[], what: string, skip: readonly string[] = []): void {
  for (const key of Object.keys(o)) {
    if (o[key] === undefined || skip.includes(key) || takes.includes(key)) continue;
    const near = takes.find((k) => k.toLowerCase() === key.toLowerCase());
    const hint = near ? ` (did you mean "${near}"?)` : "";
    const list = takes.length ? `it takes ${takes.map((k) => `"${k}"`).join(", ")}` : "it takes no other field";
    throw new ShepherdError("invalid_params", `${what} does not take ${JSON.stringify(key)}${hint}; ${list}.`);
  }
}

/** "true" and "false" as booleans; anything else unchanged (and checked later). */
export function booleanText(v: unknown): unknown {
  return v === "true" ? true : v === "false" ? false : v;
}

/** A `budget` field: an object, or the same written as JSON text (some models send objects so); refused with the reason otherwise. */
export function budgetField(v: unknown, where: string): Budget | undefined {
  if (v === undefined) return undefined;
  let value = v;
  if (typeof v === "string") {
    try {
      value = JSON.parse(v);
    } catch {
      throw new ShepherdError("invalid_params", `${where}: "budget" must be an object {"tokens"?, "outputTokens"?, "costUsd"?}.`);
    }
  }
  return parseBudget(value, where);
}
