import { type ErrorCode, ShepherdError, shorten } from "../../domain/errors.ts";
import type { WireError } from "./call.ts";

const CODE = /^[a-z][a-z_]{0,39}$/;

/** A thrown value as the agent sends it: a ShepherdError keeps its code, anything else is remote_error. */
export function toWireError(e: unknown): WireError {
  if (e instanceof ShepherdError) return { code: e.code, message: e.message.replace(/^\[[a-z_]+\]\s*/, "") };
  return { code: "remote_error", message: e instanceof Error ? e.message : String(e) };
}

/**
 * The agent's error as a ShepherdError here. Its words come from another machine: bounded, and
 * a code that is no code of ours' shape becomes remote_error (a code that is, is the adapter's
 * own there, which runs the same code as ours).
 */
export function fromWireError(err: unknown, host: string): ShepherdError {
  const o = typeof err === "object" && err !== null ? (err as Record<string, unknown>) : {};
  const message = typeof o.message === "string" ? shorten(o.message, 2000) : "the remote agent gave no reason";
  const code = typeof o.code === "string" && CODE.test(o.code) ? (o.code as ErrorCode) : "remote_error";
  return new ShepherdError(code, code === "remote_error" ? `on host "${host}": ${message}` : message);
}
