/**
 * The far end's own methods, no port's: `init` (it makes the hosted ports), `sys.dir` and
 * `sys.info` (asked before init too). The far end serves them on its own state.
 */
import { isAbsolute } from "node:path";
import { ShepherdError } from "../../../domain/errors.ts";
import type { InitAnswer, InitParams, SysInfo } from "../call.ts";
import { fields, isString, oneOf, optional } from "../shape.ts";
import { methodsOn, type Param } from "./method.ts";

/** What the far end's own methods are served on. */
export interface SysSide {
  init(params: InitParams): Promise<InitAnswer>;
  /** An existing directory there (relative and `~/` from the home; undefined: the home), else [cwd_invalid]. */
  dir(path: string | undefined): Promise<string>;
  /** Before init its parameter may name the agentDir and piCommand to look at. */
  info(param: unknown): Promise<SysInfo>;
}

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === "string");

/** init's parameter: where the far end keeps its sheep, the pi it starts, and their variables. */
export const initParams: Param<InitParams> = (p, i) => {
  const v = p[i];
  const o = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const bad = (what: string) => new ShepherdError("invalid_params", `init: ${what}.`);
  if (!o) throw bad("its parameter must be an object");
  if (typeof o.agentDir !== "string" || !isAbsolute(o.agentDir)) throw bad("agentDir must be an absolute path");
  if (o.stateDir !== undefined && (typeof o.stateDir !== "string" || !isAbsolute(o.stateDir))) throw bad("stateDir must be an absolute path");
  if (o.runtime !== "auto" && o.runtime !== "tmux" && o.runtime !== "herdr") throw bad('runtime must be "auto", "tmux" or "herdr"');
  if (!isStrings(o.piCommand) || o.piCommand.length === 0 || o.piCommand.some((s) => s === "" || s.includes("\0")))
    throw bad("piCommand must be a non-empty list of words");
  if (!Number.isSafeInteger(o.depth) || (o.depth as number) < 0) throw bad("depth must be a whole number");
  const env = o.env;
  if (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === "string"))
    throw bad("env must map names to strings");
  if (o.sandbox !== undefined && (typeof o.sandbox !== "object" || o.sandbox === null || Array.isArray(o.sandbox))) throw bad("sandbox must be an object");
  return {
    agentDir: o.agentDir,
    ...(o.stateDir !== undefined ? { stateDir: o.stateDir as string } : {}),
    runtime: o.runtime,
    piCommand: [...o.piCommand],
    depth: o.depth as number,
    env: { ...(env as Record<string, string>) },
    ...(o.sandbox !== undefined ? { sandbox: structuredClone(o.sandbox) as object } : {}),
  };
};

const pathOrNull: Param<string | null> = (p, i) => {
  const v = p[i];
  if (v !== null && v !== undefined && typeof v !== "string") throw new ShepherdError("invalid_params", "sys.dir: its parameter must be a path or null.");
  return v ?? null;
};

/** Anything: sys.info takes what it can use of it. */
const any: Param<unknown> = (p, i) => p[i];

const method = methodsOn<SysSide>();

export const SYS_WIRE = {
  /** init's answer feeds the sheep's records (their runtime) and every start's cwd: checked like every answer. */
  init: method(
    "init",
    [initParams],
    fields({ runtime: oneOf("tmux", "herdr"), stateDir: isString, tmuxSocket: optional(isString), home: isString }),
    (s, params) => s.init(params),
  ),
  /** null for "the home": JSON has no undefined in a list. */
  dir: method("sys.dir", [pathOrNull], isString, (s, path) => s.dir(path ?? undefined)),
  info: method(
    "sys.info",
    [any],
    fields({
      node: isString,
      pi: optional(isString),
      tmux: optional(isString),
      herdr: optional(isString),
      stateDirMode: (v) => v === null || Number.isSafeInteger(v),
    }),
    (s, param) => s.info(param),
  ),
};
