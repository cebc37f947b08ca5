/**
 * One method of the agent protocol as both ends use it: its name on the wire, how the far end
 * checks the parameters that came (hostile there too), how it serves them, and how the shepherd
 * checks the answer that came back. A method is added in its port's table and nowhere else on
 * the wire: the far end routes through the tables, the proxies ask through their entries.
 */
import { ShepherdError } from "../../../domain/errors.ts";
import { isWellFormedId } from "../../../domain/ids.ts";
import type { PaneRef } from "../../../ports/runtime.ts";
import { expect } from "../shape.ts";
import type { RemoteCall } from "../call.ts";

/** Checks the parameter at `i` of `method`, else throws [invalid_params]. */
export type Param<T> = (p: unknown[], i: number, method: string) => T;
type Params<P extends unknown[]> = { [K in keyof P]: Param<P[K]> };

export interface WireMethod<S, P extends unknown[]> {
  readonly name: string;
  /** The far end's check: the typed parameters, else [invalid_params]. */
  readonly params: (p: unknown[]) => P;
  /** The shepherd's check of the answer (hostile data); some answers must echo a parameter. */
  readonly answer: (v: unknown, params: P) => boolean;
  /** What the far end does with them; undefined travels as no answer. */
  readonly serve: (side: S, ...params: P) => unknown;
}

/** A port's table maker: `S` is what its methods are served on at the far end. */
export function methodsOn<S>() {
  return <P extends unknown[]>(
    name: string,
    params: Params<P>,
    answer: (v: unknown, params: P) => boolean,
    serve: (side: S, ...params: P) => unknown,
  ): WireMethod<S, P> => ({
    name,
    params: (p) => (params as Param<unknown>[]).map((check, i) => check(p, i, name)) as P,
    answer,
    serve,
  });
}

const fail = (what: string) => new ShepherdError("invalid_params", what);

function kind<T>(k: "string" | "number" | "object"): Param<T> {
  return (p, i, method) => {
    const v = p[i];
    const ok = k === "object" ? typeof v === "object" && v !== null && !Array.isArray(v) : typeof v === k;
    if (!ok) throw fail(`${method}: parameter ${i + 1} must be ${k === "object" ? "an object" : `a ${k}`}.`);
    return v as T;
  };
}

export const str: Param<string> = kind("string");
export const num: Param<number> = kind("number");
/** An object the far end's adapter checks further (as it checks a local caller's). */
export const obj = <T>(): Param<T> => kind<T>("object");

export const agentId: Param<string> = (p, i, method) => {
  const id = str(p, i, method);
  if (!isWellFormedId(id, "agent")) throw fail(`${method}: "${id.slice(0, 40)}" is no agent id.`);
  return id;
};

/** A pane as it travels: `{paneId, agentId}` (agentId empty where the port's call names none). */
export const paneRef: Param<PaneRef> = (p, i, method) => {
  const v = obj<Record<string, unknown>>()(p, i, method);
  if (typeof v.paneId !== "string" || typeof v.agentId !== "string") throw fail(`${method}: parameter ${i + 1} must be a pane {paneId, agentId}.`);
  return { paneId: v.paneId, agentId: v.agentId };
};

export const paneRefs: Param<PaneRef[]> = (p, i, method) => {
  const list = p[i];
  if (!Array.isArray(list)) throw fail(`${method}: parameter ${i + 1} must be a list of panes.`);
  return list.map((_, j) => paneRef(list, j, method));
};

/** The answer of a method that returns nothing: not looked at. */
export const ignored = (): boolean => true;

/** Asks the far end through a table's entry: its name, and its check of the answer. */
export async function ask<T, P extends unknown[]>(remote: RemoteCall, host: string, m: WireMethod<never, P>, ...params: P): Promise<T> {
  return expect<T>(await remote.call(m.name, params), (v) => m.answer(v, params), m.name, host);
}
