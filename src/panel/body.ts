/** A state change's body: JSON only (a form or text/plain from another site is no JSON), an object, bounded. */
import type { IncomingMessage } from "node:http";
import { isRecord } from "../domain/guards.ts";
import { ShepherdError } from "../domain/errors.ts";
import { HttpError } from "./errors.ts";

/** More than a prompt may hold (4 MiB), with room for JSON's escapes. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    req.resume();
    throw new HttpError(415, "unsupported_media_type", 'a POST needs "Content-Type: application/json" and a JSON object as its body.');
  }
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    throw new HttpError(413, "too_large", `the body is over ${MAX_BODY_BYTES} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, "too_large", `the body is over ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ShepherdError("invalid_params", `the body is not JSON (${(e as Error).message}).`);
  }
  if (!isRecord(value) || Array.isArray(value)) throw new ShepherdError("invalid_params", "the body must be a JSON object.");
  return value as Record<string, unknown>;
}

/** Refuses a key the route does not take, naming what it takes. */
export function onlyKeys(body: Record<string, unknown>, takes: readonly string[], what: string): void {
  for (const key of Object.keys(body)) {
    if (!takes.includes(key)) {
      const list = takes.length ? `it takes ${takes.map((k) => `"${k}"`).join(", ")}` : "it takes none";
      throw new ShepherdError("invalid_params", `${what} does not take ${JSON.stringify(key)}; ${list}.`);
    }
  }
}
