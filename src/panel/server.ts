/**
 * The panel's HTTP server on 127.0.0.1: checks every request's host, then its token or cookie,
 * then (for a change) its origin and JSON body, and hands it to a route. The page's files and
 * /healthz need no token; nothing else answers without one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Shepherd } from "../core/shepherd.ts";
import { errorText, ShepherdError } from "../domain/errors.ts";
import { isWellFormedId } from "../domain/ids.ts";
import { type EntryDeps, entryFrom } from "../edge/entry.ts";
import { checkHost, checkOrigin, cookieName, PanelAuth, SESSION_HEADER, SESSION_IDLE_MS, TOKEN_IDLE_MS } from "./auth.ts";
import { jsonBody } from "./body.ts";
import { COMMON_HEADERS, HttpError, sendError, sendJson } from "./errors.ts";
import { PanelFeed } from "./feed.ts";
import { metricsText, type ServerCounters } from "./metrics.ts";
import { isPagePath, sendPage } from "./page.ts";
import { agentsRoute, type RouteContext, startRoute } from "./routes.ts";
import { delegationsRoute, herdRoute, startOptionsRoute } from "./herd-routes.ts";
import { sheepRoutes } from "./work-routes.ts";
import { ProxiedTerminals, proxyToShepherd, type ShepherdsSource, shepherdsRoute } from "./shepherds-route.ts";

/** Routes under /api/v1/sheep/:id, by method and the segment after the id. */
const SHEEP_ROUTES = sheepRoutes();
/** Routes of the herd, by path: each takes GET (and HEAD). */
const HERD_ROUTES: Record<string, (c: RouteContext) => Promise<unknown>> = {
  "/api/v1/delegations": delegationsRoute,
  "/api/v1/start-options": startOptionsRoute,
};
import { SseHub } from "./sse.ts";
import { TerminalStreams, terminalKeys } from "./terminal.ts";

/**
 * Connections held at once: the event streams' 100 and a page's few requests fit many times over;
 * a local process opening more gets each closed at once instead of the shepherd's descriptors.
 */
export const MAX_CONNECTIONS = 128;
/** A connection that has not sent its request's headers by then is closed (a few seconds: a real client sends them at once). */
export const HEADERS_TIMEOUT_MS = 5000;
/** How often node looks for connections past HEADERS_TIMEOUT_MS (its default, 30 s, would let them stay that long). */
const CONNECTIONS_CHECK_MS = 1000;

export interface PanelOptions {
  /** The tool's entry on the composed shepherd: the panel runs every action through it. */
  entry: EntryDeps;
  /** 0: a free port. */
  port?: number;
  /** The token and sessions, kept across a reload; a fresh token without. */
  auth?: PanelAuth;
  /** Where the page's files are (tests give their own). */
  pageDir?: string;
  /** This user's other shepherds (registry.ts): listed, and reached through this panel. */
  shepherds?: ShepherdsSource;
}

export class PanelServer {
  readonly auth: PanelAuth;
  readonly hub = new SseHub();
  readonly terminals = new TerminalStreams();
  /** Other shepherds' sheep's terminals carried through this panel (shepherds-route.ts). */
  readonly siblingTerminals = new ProxiedTerminals();
  private server: Server | undefined;
  private feed: PanelFeed | undefined;
  private shepherd: Shepherd | undefined;
  private boundPort = 0;
  private readonly counters: ServerCounters = { requests: new Map(), errors: new Map(), clients: 0 };

  constructor(private readonly opts: PanelOptions) {
    this.auth = opts.auth ?? new PanelAuth();
  }

  get port(): number {
    return this.boundPort;
  }

  /** The URL a person opens: the token in the fragment, which no browser sends in a request. */
  get url(): string {
    return `http://127.0.0.1:${this.boundPort}/#token=${this.auth.token}`;
  }

  get listening(): boolean {
    return this.server?.listening === true;
  }

  async start(): Promise<string> {
    if (this.server) return this.url;
    const ctx = await this.opts.entry.context();
    this.shepherd = ctx.shepherd;
    this.feed = new PanelFeed(ctx.shepherd, this.hub);
    await this.feed.start();
    const server = createServer(
      { connectionsCheckingInterval: CONNECTIONS_CHECK_MS, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: 60_000, keepAliveTimeout: 5000 },
      (req, res) => void this.handle(req, res),
    );
    server.maxConnections = MAX_CONNECTIONS;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen({ host: "127.0.0.1", port: this.opts.port ?? 0, exclusive: true }, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (e) {
      this.feed.stop();
      this.feed = undefined;
      const port = this.opts.port ?? 0;
      const busy = (e as NodeJS.ErrnoException).code === "EADDRINUSE";
      throw new ShepherdError(
        "panel_unavailable",
        busy
          ? `port ${port} on 127.0.0.1 is taken; set another "panel": {"port": …} in your user settings (0 takes a free one), then /reload.`
          : `the panel could not listen on 127.0.0.1:${port}: ${errorText(e)}.`,
        { cause: e },
      );
    }
    // pi's own work keeps it running, never the panel: a pi that ends does not wait on this port.
    server.unref();
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    return this.url;
  }

  /** Closes the port: every stream and connection ends now, not at their next request. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.feed?.stop();
    this.feed = undefined;
    this.hub.closeAll();
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private count(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const where = { route: "unknown" };
    try {
      checkHost(req, this.boundPort);
      const { segments, query } = parseTarget(req.url ?? "/");
      const path = `/${segments.join("/")}`;
      const method = req.method ?? "GET";
      if (path === "/healthz") {
        where.route = "/healthz";
        allow(method, ["GET", "HEAD"]);
        return sendJson(res, 200, { ok: true, sheep: this.feed?.herd().totals.sheep ?? 0 });
      }
      if (isPagePath(path)) {
        where.route = path;
        allow(method, ["GET", "HEAD"]);
        return await sendPage(res, path, this.opts.pageDir, method === "HEAD");
      }
      const credential = this.auth.credential(req, this.boundPort);
      if (!credential) {
        req.resume();
        throw new HttpError(
          401,
          "unauthorized",
          `this needs the panel's token (Authorization: Bearer …), or a session of its page (its cookie and the ${SESSION_HEADER} header together); a session ends after ${SESSION_IDLE_MS / 3_600_000} hours unused, a token after ${TOKEN_IDLE_MS / 3_600_000}. /shepherd panel url in the shepherd's pi prints a URL that opens it.`,
        );
      }
      checkOrigin(req, this.boundPort, credential, method !== "GET" && method !== "HEAD");
      // The page acts with its session cookie, a program with the Bearer token: the audit log tells them apart.
      await this.api(req, res, method, segments, query, where, entryFrom(this.opts.entry, credential === "cookie" ? "panel" : "api"));
    } catch (e) {
      this.count(this.counters.errors, sendError(res, e));
    } finally {
      this.count(this.counters.requests, where.route);
    }
  }

  /** The routes that need the token; `where` learns the route's pattern (for the counters) before it runs. */
  private async api(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    segments: string[],
    query: URLSearchParams,
    where: { route: string },
    entry: EntryDeps,
  ): Promise<void> {
    const shepherd = this.shepherd!;
    const feed = this.feed!;
    const [a, b, c, id, sub, ...rest] = segments;
    const path = `/${segments.join("/")}`;
    const ctx = async (): Promise<RouteContext> => ({
      shepherd,
      entry,
      feed,
      query,
      body: method === "POST" ? await jsonBody(req) : {},
    });
    if (path === "/metrics") {
      where.route = "/metrics";
      allow(method, ["GET", "HEAD"]);
      this.counters.clients = this.hub.size;
      // A ledger that cannot be read leaves the day's numbers out; the rest of /metrics still answers.
      const day = await shepherd.spend.day().catch(() => undefined);
      const text = metricsText(shepherd, feed.counters, this.counters, day);
      res.writeHead(200, { ...COMMON_HEADERS, "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(text);
      return;
    }
    if (a !== "api" || b !== "v1") throw notFound(path);
    if (path === "/api/v1/session") {
      where.route = "/api/v1/session";
      allow(method, ["POST"]);
      await jsonBody(req);
      if (!this.auth.hasToken(req, this.boundPort))
        throw new HttpError(401, "unauthorized", "a session is given only for the token itself (Authorization: Bearer …).");
      const session = this.auth.newSession();
      sendJson(
        res,
        200,
        { session: session.key, header: SESSION_HEADER },
        { "set-cookie": `${cookieName(this.boundPort)}=${session.cookie}; HttpOnly; SameSite=Strict; Path=/` },
      );
      return;
    }
    if (path === "/api/v1/events") {
      where.route = "/api/v1/events";
      allow(method, ["GET"]);
      this.hub.open(req, res, undefined, () => this.auth.credential(req, this.boundPort, false) !== undefined);
      return;
    }
    if (path === "/api/v1/start") {
      where.route = "/api/v1/start";
      allow(method, ["POST"]);
      sendJson(res, 200, await startRoute(await ctx()));
      return;
    }
    if (path === "/api/v1/agents") {
      where.route = "/api/v1/agents";
      allow(method, ["GET", "HEAD"]);
      sendJson(res, 200, await agentsRoute(await ctx()));
      return;
    }
    const herdRouted = Object.hasOwn(HERD_ROUTES, path) ? HERD_ROUTES[path] : undefined;
    if (herdRouted) {
      where.route = path;
      allow(method, ["GET", "HEAD"]);
      sendJson(res, 200, await herdRouted(await ctx()));
      return;
    }
    if (c === "shepherds") {
      const src = this.opts.shepherds;
      if (id === undefined) {
        where.route = "/api/v1/shepherds";
        allow(method, ["GET", "HEAD"]);
        return sendJson(res, 200, src ? shepherdsRoute(src) : { shepherds: [] });
      }
      where.route = "/api/v1/shepherds/:id/*";
      if (!src) throw notFound(path);
      const allowed = () => this.auth.credential(req, this.boundPort, false) !== undefined;
      return await proxyToShepherd(src, id, sub === undefined ? [] : [sub, ...rest], query, req, res, { allowed, terminals: this.siblingTerminals });
    }
    if (c !== "sheep") throw notFound(path);
    if (id === undefined) {
      where.route = "/api/v1/sheep";
      allow(method, ["GET", "HEAD"]);
      sendJson(res, 200, await herdRoute(await ctx()));
      return;
    }
    // Checked before anything is looked up: an id becomes a directory name in the core.
    if (!isWellFormedId(id, "agent")) throw new ShepherdError("invalid_params", `${JSON.stringify(id)} is not a sheep's id (a_ and 10 of [0-9a-z]).`);
    if (rest.length > 0) throw notFound(path);
    const key = sub ?? "";
    const pattern = `/api/v1/sheep/:id${key ? `/${key}` : ""}`;
    // Own keys only: "toString" or "constructor" is no route. Only a route's pattern is counted, so a
    // client asking for paths that do not exist adds no label to /metrics.
    // The terminal is no action of the tool: its stream and its keys are answered in terminal.ts.
    const takes = key === "terminal" ? ["GET", "POST"] : Object.keys(SHEEP_ROUTES).filter((m) => Object.hasOwn(SHEEP_ROUTES[m]!, key));
    if (takes.length === 0) throw notFound(path);
    where.route = pattern;
    // HEAD is GET without the body (node's response sends none for it).
    if (takes.includes("GET")) takes.splice(takes.indexOf("GET") + 1, 0, "HEAD");
    if (!takes.includes(method)) throw new HttpError(405, "method_not_allowed", `${pattern} takes ${takes.join(", ")}.`, takes);
    if (key === "terminal") {
      onlyQueryNone(query, pattern);
      if (method === "POST") return sendJson(res, 200, await terminalKeys(shepherd, id, await jsonBody(req)));
      const allowed = () => this.auth.credential(req, this.boundPort, false) !== undefined;
      return await this.terminals.stream(shepherd, id, req, res, allowed, method === "HEAD");
    }
    const handler = SHEEP_ROUTES[method === "HEAD" ? "GET" : method]![key]!;
    sendJson(res, 200, (await handler(await ctx(), id)) ?? {});
  }
}

function allow(method: string, methods: readonly string[]): void {
  if (!methods.includes(method)) throw new HttpError(405, "method_not_allowed", `this route takes ${methods.join(", ")}.`, methods);
}

function onlyQueryNone(query: URLSearchParams, pattern: string): void {
  for (const key of query.keys()) throw new ShepherdError("invalid_params", `GET ${pattern} takes no query parameter ${JSON.stringify(key)}.`);
}

function notFound(path: string): HttpError {
  return new HttpError(404, "not_found", `no route ${JSON.stringify(path)}; the routes are in spec.md ("The panel and its API").`);
}

/**
 * The request's path as segments, each decoded once and refused when it could mean another path:
 * `.`, `..` (also as `%2e%2e`), or a `/` or `\` inside (`%2f`). The URL parser would quietly
 * resolve them; they are refused before it can.
 */
export function parseTarget(target: string): { segments: string[]; query: URLSearchParams } {
  const q = target.indexOf("?");
  const rawPath = q < 0 ? target : target.slice(0, q);
  const query = new URLSearchParams(q < 0 ? "" : target.slice(q + 1));
  if (!rawPath.startsWith("/")) throw new ShepherdError("invalid_params", "the request's path must begin with /.");
  const raw = rawPath.split("/").slice(1);
  // A trailing slash names the same thing as without it.
  if (raw.length > 1 && raw[raw.length - 1] === "") raw.pop();
  const segments = raw.map((s) => {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      throw new ShepherdError("invalid_params", `the path segment ${JSON.stringify(s)} is not well-formed percent-encoding.`);
    }
    if (d === "." || d === ".." || /[/\\\u0000]/.test(d) || (s === "" && raw.length > 1)) {
      throw new ShepherdError("invalid_params", `the path segment ${JSON.stringify(s)} is refused: no ".", "..", "/", "\\\\" or empty segment in a path.`);
    }
    return d;
  });
  return { segments: segments.length === 1 && segments[0] === "" ? [] : segments, query };
}
