/**
 * Errors as the panel answers them: `{code, message}` with the tool's `[code]`s and an HTTP status
 * for each, and the few codes only HTTP has (a wrong host, no token, a body that is not JSON).
 */
import type { ServerResponse } from "node:http";
import { type ErrorCode, errorText, ShepherdError } from "../domain/errors.ts";

/** What only the HTTP edge refuses: before any command is built. */
export type HttpCode =
  | "bad_host"
  | "bad_origin"
  | "unauthorized"
  | "unsupported_media_type"
  | "too_large"
  | "not_found"
  | "method_not_allowed"
  | "too_many_clients"
  | "shepherd_unreachable"
  | "internal_error";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: HttpCode | ErrorCode,
    message: string,
    /** A 405's methods, for its Allow header. */
    readonly allow?: readonly string[],
  ) {
    super(`[${code}] ${message}`);
    this.name = "HttpError";
  }
}

const STATUS: Partial<Record<ErrorCode, number>> = {
  invalid_params: 400,
  unknown_agent: 404,
  unknown_prompt: 404,
  unknown_message: 404,
  unknown_definition: 404,
  no_evidence: 404,
  not_owned: 403,
  project_agent_refused: 403,
  trust_refused: 403,
  agent_closed: 409,
  prompt_pending: 409,
  not_working: 409,
  queue_full: 409,
  reply_refused: 409,
  ambiguous_label: 409,
  land_refused: 409,
  sync_refused: 409,
  dirty_worktree: 409,
  not_resumable: 409,
  runtime_unavailable: 503,
  panel_unavailable: 503,
  host_unknown: 404,
  cwd_invalid: 400,
  host_unreachable: 502,
  remote_error: 502,
  protocol_error: 502,
};

/** The status and body of any thrown value: the core's codes keep their words. */
export function errorAnswer(e: unknown): { status: number; code: string; message: string } {
  if (e instanceof HttpError) return { status: e.status, code: e.code, message: e.message };
  if (e instanceof ShepherdError) return { status: STATUS[e.code] ?? 500, code: e.code, message: e.message };
  return { status: 500, code: "internal_error", message: `[internal_error] ${errorText(e)}` };
}

/** Headers every answer carries: nothing is cached, sniffed, framed or told where it came from. */
export const COMMON_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...COMMON_HEADERS, "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, e: unknown): string {
  const { status, code, message } = errorAnswer(e);
  if (res.headersSent) res.destroy();
  else sendJson(res, status, { code, message }, e instanceof HttpError && e.allow ? { allow: e.allow.join(", ") } : {});
  return code;
}
