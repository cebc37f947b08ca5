/**
 * One page for all of this user's shepherds: `GET /api/v1/shepherds` lists the panels the registry
 * knows (never their tokens), and `/api/v1/shepherds/:pid/api/v1/…` asks one of them for the page,
 * with that panel's own token (read from its private registry entry, never sent to the browser),
 * bounded in bytes and time. A prompt, reply, interrupt or close of its sheep is that shepherd's
 * own route, under its own rules and ownership checks; its refusals come back as it answered them.
 * The event stream and a sheep's terminal are not carried: a sibling's herd is read when the page
 * asks, not followed, and its panes are reached only through its own page.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { jsonBody } from "./body.ts";
import { COMMON_HEADERS, HttpError } from "./errors.ts";
import type { ShepherdEntry, ShepherdRegistry } from "./registry.ts";

/** A sibling's answer read at most: a herd with its history fits many times over. */
export const PROXY_MAX_BYTES = 16 * 1024 * 1024;
/** A sibling that has not answered whole by then is given up on. */
export const PROXY_TIMEOUT_MS = 15_000;

export interface ShepherdsSource {
  registry: ShepherdRegistry;
  /** This process's pid, and the user's stable port: which entry is this panel, which holds the bookmark. */
  selfPid: number;
  stablePort: number;
}

export interface ShepherdView {
  id: string;
  pid: number;
  port: number;
  cwd: string;
  startedAt: string;
  self: boolean;
  stable: boolean;
}

export function shepherdsRoute(src: ShepherdsSource): { shepherds: ShepherdView[] } {
  return {
    shepherds: src.registry.list().map((e) => ({
      id: String(e.pid),
      pid: e.pid,
      port: e.port,
      cwd: e.cwd,
      startedAt: e.startedAt,
      self: e.pid === src.selfPid,
      stable: e.port === src.stablePort,
    })),
  };
}

/** The sibling `id` names, or 404. */
function siblingOf(src: ShepherdsSource, id: string): ShepherdEntry {
  const entry = /^[1-9][0-9]{0,9}$/.test(id) ? src.registry.list().find((e) => String(e.pid) === id) : undefined;
  if (!entry) throw new HttpError(404, "not_found", `no running shepherd ${JSON.stringify(id)} of this user; GET /api/v1/shepherds lists them.`);
  return entry;
}

/** Forwards the request to the sibling's `/api/v1/<rest>` and sends its answer back as it came (JSON). */
export async function proxyToShepherd(
  src: ShepherdsSource,
  id: string,
  rest: string[],
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const entry = siblingOf(src, id);
  if (rest[0] !== "api" || rest[1] !== "v1" || rest[2] === "events" || rest[2] === "session" || rest[2] === "shepherds") {
    req.resume();
    throw new HttpError(404, "not_found", "a shepherd's routes are reached as /api/v1/shepherds/:id/api/v1/… (not its events, session or shepherds).");
  }
  // A pane is typed into or streamed only by the page of the shepherd that owns it: this panel carries JSON, never a pane.
  if (rest[2] === "sheep" && rest[4] === "terminal") {
    req.resume();
    throw new HttpError(404, "not_found", `a sheep's terminal is not carried to another shepherd's page; open it in shepherd ${entry.pid}'s own page.`);
  }
  const method = req.method ?? "GET";
  if (!["GET", "HEAD", "POST"].includes(method)) throw new HttpError(405, "method_not_allowed", "this route takes GET, HEAD, POST.", ["GET", "HEAD", "POST"]);
  const body = method === "POST" ? JSON.stringify(await jsonBody(req)) : undefined;
  const q = query.toString();
  const path = `/${rest.map(encodeURIComponent).join("/")}${q ? `?${q}` : ""}`;
  const answer = await new Promise<{ status: number; type: string; data: Buffer }>((resolve, reject) => {
    const out = httpRequest(
      {
        host: "127.0.0.1",
        port: entry.port,
        method,
        path,
        agent: false,
        timeout: PROXY_TIMEOUT_MS,
        headers: {
          host: `127.0.0.1:${entry.port}`,
          authorization: `Bearer ${entry.token}`,
          accept: "application/json",
          ...(body !== undefined ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } : {}),
        },
      },
      (r) => {
        const parts: Buffer[] = [];
        let size = 0;
        r.on("data", (c: Buffer) => {
          size += c.length;
          if (size > PROXY_MAX_BYTES) {
            r.destroy();
            reject(new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid}'s answer is over ${PROXY_MAX_BYTES} bytes.`));
            return;
          }
          parts.push(c);
        });
        r.on("end", () => resolve({ status: r.statusCode ?? 502, type: String(r.headers["content-type"] ?? ""), data: Buffer.concat(parts) }));
        r.on("error", reject);
      },
    );
    const deadline = setTimeout(() => out.destroy(new Error(`no whole answer within ${PROXY_TIMEOUT_MS} ms`)), PROXY_TIMEOUT_MS);
    out.on("close", () => clearTimeout(deadline));
    out.on("timeout", () => out.destroy(new Error(`no answer within ${PROXY_TIMEOUT_MS} ms`)));
    out.on("error", (e) =>
      reject(
        e instanceof HttpError ? e : new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid} (port ${entry.port}) does not answer: ${e.message}.`),
      ),
    );
    out.end(body);
  });
  // Only JSON is carried: whatever else a port answers is not a panel's.
  const json = answer.type.startsWith("application/json");
  if (!json && answer.data.length > 0) throw new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid}'s port answered something that is not JSON.`);
  // Its own refusal of the registered token (or Host) is not this page's session ending: the entry is stale.
  if (answer.status === 401 || answer.status === 421)
    throw new HttpError(
      502,
      "shepherd_unreachable",
      `shepherd ${entry.pid} (port ${entry.port}) refused the token its registry entry holds (a stale entry, or another program on its port); its own /shepherd panel url opens it.`,
    );
  res.writeHead(answer.status, { ...COMMON_HEADERS, "content-type": "application/json; charset=utf-8" });
  res.end(method === "HEAD" ? undefined : answer.data);
}
