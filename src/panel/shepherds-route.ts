/**
 * One page for all of this user's shepherds: `GET /api/v1/shepherds` lists the panels the registry
 * knows (never their tokens), and `/api/v1/shepherds/:pid/api/v1/…` asks one of them for the page,
 * with that panel's own token (read from its private registry entry, never sent to the browser),
 * bounded in bytes and time. A prompt, reply, interrupt, close, land, sync, resume or a terminal's
 * keys is that shepherd's own route, under its own rules and ownership checks; its refusals come
 * back as it answered them. A sheep's terminal stream is carried byte for byte as it comes, bounded
 * like this panel's own; this panel never touches a sibling's pane itself. The event stream is not
 * carried: a sibling's herd is read when the page asks, not followed.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { jsonBody } from "./body.ts";
import { COMMON_HEADERS, HttpError } from "./errors.ts";
import { MAX_TERMINAL_STREAMS, MAX_TERMINAL_UNSENT, TERMINAL_CHECK_MS } from "./terminal.ts";
import type { ShepherdEntry, ShepherdRegistry } from "./registry.ts";

/** A sibling's answer read at most: a herd with its history fits many times over. */
export const PROXY_MAX_BYTES = 16 * 1024 * 1024;
/** A sibling that has not answered whole by then is given up on. */
export const PROXY_TIMEOUT_MS = 15_000;
/** An action's answer waits longer: a resume starts a pi, a land runs git (each under the tool's own deadlines). */
export const PROXY_ACTION_TIMEOUT_MS = 120_000;

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

/** What the proxy is told besides the request: the page's session still holding, and the open terminals' count. */
export interface ProxyOptions {
  /** Asked while a terminal stream is open: false ends it, as the page's own stream does. */
  allowed: () => boolean;
  terminals: ProxiedTerminals;
}

/** The terminals carried to other shepherds' sheep: at most MAX_TERMINAL_STREAMS open at once, like this panel's own. */
export class ProxiedTerminals {
  open = 0;
}

/** Forwards the request to the sibling's `/api/v1/<rest>` and sends its answer back as it came (JSON, or a terminal's bytes). */
export async function proxyToShepherd(
  src: ShepherdsSource,
  id: string,
  rest: string[],
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  opts: ProxyOptions,
): Promise<void> {
  const entry = siblingOf(src, id);
  if (rest[0] !== "api" || rest[1] !== "v1" || rest[2] === "events" || rest[2] === "session" || rest[2] === "shepherds") {
    req.resume();
    throw new HttpError(404, "not_found", "a shepherd's routes are reached as /api/v1/shepherds/:id/api/v1/… (not its events, session or shepherds).");
  }
  const method = req.method ?? "GET";
  if (!["GET", "HEAD", "POST"].includes(method)) throw new HttpError(405, "method_not_allowed", "this route takes GET, HEAD, POST.", ["GET", "HEAD", "POST"]);
  const body = method === "POST" ? JSON.stringify(await jsonBody(req)) : undefined;
  const q = query.toString();
  const path = `/${rest.map(encodeURIComponent).join("/")}${q ? `?${q}` : ""}`;
  // A pane's stream: its bytes carried as they come. Its keys (a POST) are JSON like any action,
  // and the pane is touched only by the shepherd that owns it, under its rules.
  const stream = method !== "POST" && rest[2] === "sheep" && rest[4] === "terminal" && rest.length === 5;
  if (stream && opts.terminals.open >= MAX_TERMINAL_STREAMS)
    throw new HttpError(503, "too_many_clients", `${MAX_TERMINAL_STREAMS} terminals of other shepherds are open here; close one first.`);
  // A stream's place is held while its head is awaited: pages opening at once cannot pass the bound together.
  if (stream) opts.terminals.open++;
  let r: IncomingMessage;
  try {
    r = await ask(
      entry,
      method,
      path,
      body,
      stream ? "application/octet-stream" : "application/json",
      method === "POST" ? PROXY_ACTION_TIMEOUT_MS : PROXY_TIMEOUT_MS,
    );
  } catch (e) {
    if (stream) opts.terminals.open--;
    throw e;
  }
  if (stream && r.statusCode === 200 && String(r.headers["content-type"] ?? "").startsWith("application/octet-stream")) {
    carryTerminal(r, req, res, opts, method === "HEAD");
    return;
  }
  if (stream) opts.terminals.open--;
  const answer = await readWhole(entry, r);
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

/** The sibling's answer's head, within `deadline` ms; its body is read by the caller. */
function ask(entry: ShepherdEntry, method: string, path: string, body: string | undefined, accept: string, deadline: number): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const out = httpRequest(
      {
        host: "127.0.0.1",
        port: entry.port,
        method,
        path,
        agent: false,
        timeout: deadline,
        headers: {
          host: `127.0.0.1:${entry.port}`,
          authorization: `Bearer ${entry.token}`,
          accept,
          ...(body !== undefined ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } : {}),
        },
      },
      (r) => {
        clearTimeout(timer);
        resolve(r);
      },
    );
    const timer = setTimeout(() => out.destroy(new Error(`no answer within ${deadline} ms`)), deadline);
    out.on("close", () => clearTimeout(timer));
    out.on("timeout", () => out.destroy(new Error(`no answer within ${deadline} ms`)));
    out.on("error", (e) => reject(new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid} (port ${entry.port}) does not answer: ${e.message}.`)));
    out.end(body);
  });
}

/** A JSON answer read whole, bounded in bytes and time. */
function readWhole(entry: ShepherdEntry, r: IncomingMessage): Promise<{ status: number; type: string; data: Buffer }> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      r.destroy();
      reject(new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid}'s answer did not come whole within ${PROXY_TIMEOUT_MS} ms.`));
    }, PROXY_TIMEOUT_MS);
    r.on("data", (c: Buffer) => {
      size += c.length;
      if (size > PROXY_MAX_BYTES) {
        clearTimeout(timer);
        r.destroy();
        reject(new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid}'s answer is over ${PROXY_MAX_BYTES} bytes.`));
        return;
      }
      parts.push(c);
    });
    r.on("end", () => {
      clearTimeout(timer);
      resolve({ status: r.statusCode ?? 502, type: String(r.headers["content-type"] ?? ""), data: Buffer.concat(parts) });
    });
    r.on("error", (e) => {
      clearTimeout(timer);
      reject(new HttpError(502, "shepherd_unreachable", `shepherd ${entry.pid}'s answer broke off: ${e.message}.`));
    });
  });
}

/** A pane's size as the sibling sent it, when it is one: nothing else of its headers is passed on. */
function sizeHeader(v: unknown): string | undefined {
  return typeof v === "string" && /^[1-9][0-9]{0,3}$/.test(v) ? v : undefined;
}

/**
 * A terminal's bytes, each chunk passed on as it comes (no buffering); it ends when either side
 * ends, when the page leaves MAX_TERMINAL_UNSENT unread (as this panel's own stream), or when the
 * page's session no longer holds.
 */
function carryTerminal(r: IncomingMessage, req: IncomingMessage, res: ServerResponse, opts: ProxyOptions, head: boolean): void {
  // A page gone while the sibling's head was awaited: nothing to carry, and the sibling's watch ends now.
  if (res.destroyed || req.destroyed) {
    opts.terminals.open--;
    r.destroy();
    return;
  }
  // Open for as long as the pane is watched: the deadline was for its head only.
  r.socket.setTimeout(0);
  const cols = sizeHeader(r.headers["x-terminal-cols"]);
  const rows = sizeHeader(r.headers["x-terminal-rows"]);
  res.writeHead(200, {
    ...COMMON_HEADERS,
    "content-type": "application/octet-stream",
    ...(cols ? { "x-terminal-cols": cols } : {}),
    ...(rows ? { "x-terminal-rows": rows } : {}),
    "x-accel-buffering": "no",
  });
  if (head) {
    opts.terminals.open--;
    r.destroy();
    res.end();
    return;
  }
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    opts.terminals.open--;
    clearInterval(timer);
    r.destroy();
    if (!res.writableEnded) res.destroy();
  };
  const timer = setInterval(() => {
    if (!opts.allowed()) res.end();
  }, TERMINAL_CHECK_MS);
  timer.unref();
  req.socket.setNoDelay(true);
  r.on("data", (c: Buffer) => {
    if (done) return;
    if (res.writableLength > MAX_TERMINAL_UNSENT) {
      finish();
      return;
    }
    res.write(c);
  });
  r.on("end", () => {
    if (!done) res.end();
  });
  // The sibling gone mid-stream (it quit, its pane closed without an end): the page's stream ends too.
  r.on("close", () => {
    if (!r.complete) finish();
  });
  r.on("error", finish);
  res.on("close", finish);
  res.on("error", finish);
}
