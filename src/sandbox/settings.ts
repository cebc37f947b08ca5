import { ShepherdError } from "../domain/errors.ts";

/** The user's `sandbox` setting: its shape and the one check of it (src/settings.ts reports what fails). */

export interface SandboxSettings {
  /** "on": every sheep of this user runs in bubblewrap, and no request may turn that off; left out, "off". */
  default?: "off" | "on";
  /** More paths a sandboxed sheep may read inside hidden places (absolute, or ~/…). */
  allowRead?: string[];
  /** More paths a sandboxed sheep may write (absolute, or ~/…). */
  allowWrite?: string[];
  /** More paths a sandboxed sheep may not even read: an empty directory or file in their place. */
  denyRead?: string[];
  /** host[:port] a sandboxed sheep may reach through the shepherd's egress proxy. */
  allowNetwork?: string[];
}

export const DEFAULT_SANDBOX: SandboxSettings = { default: "off" };

const KEYS = ["default", "allowRead", "allowWrite", "denyRead", "allowNetwork"] as const;
const MAX_ENTRIES = 256;

const pathEntry = (x: unknown) =>
  typeof x === "string" &&
  x.length <= 4096 &&
  (x.startsWith("/") || x.startsWith("~/")) &&
  // The whole root (bound writable over everything, the private /tmp too) is no entry.
  x.replace(/\/+$/, "") !== "" &&
  !/[\u0000-\u001f\u007f]/.test(x) &&
  !x.split("/").includes("..");
/** A name or address with an optional port: nothing a proxy could read as more than one host. */
const hostEntry = (x: unknown) => typeof x === "string" && /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9*]([A-Za-z0-9.*-]{0,252}))(:\d{1,5})?$/.test(x);

/** Why a `sandbox` value is not one; undefined when it is. */
export function sandboxProblem(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return 'an object like {"default": "on"}';
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!(KEYS as readonly string[]).includes(k)) return `unknown key "${k}" (known: ${KEYS.join(", ")})`;
  if (o.default !== undefined && o.default !== "off" && o.default !== "on") return '"default" must be "off" or "on"';
  for (const k of ["allowRead", "allowWrite", "denyRead"] as const) {
    const xs = o[k];
    if (xs === undefined) continue;
    if (!Array.isArray(xs) || xs.length > MAX_ENTRIES || !xs.every(pathEntry)) {
      return `"${k}" must be a list of at most ${MAX_ENTRIES} absolute paths (or ~/…) without ".."`;
    }
  }
  const net = o.allowNetwork;
  if (net !== undefined && (!Array.isArray(net) || net.length > MAX_ENTRIES || !net.every(hostEntry))) {
    return `"allowNetwork" must be a list of at most ${MAX_ENTRIES} host[:port] entries`;
  }
  return undefined;
}

/** Whether a sheep runs sandboxed: the user's default, or a request that asks for it; never a request that turns it off. */
export function sandboxWanted(settings: SandboxSettings, asked: boolean | undefined, who: string): boolean {
  if (asked === false && settings.default === "on") {
    throw new ShepherdError(
      "invalid_params",
      `${who} asks for sandbox: false, but the user's setting "sandbox.default" is "on": no request can turn the sandbox off.`,
    );
  }
  return settings.default === "on" || asked === true;
}
