/**
 * A panel on a real shepherd core over the in-memory multiplexer and sheep-files port, listening on
 * 127.0.0.1 for real: the HTTP tests and the panel's bench rows use it. Requests go through
 * node:http (fetch cannot set Host, which the rebinding tests must).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Shepherd } from "../../src/core/shepherd.ts";
import { report } from "../../src/doctor/types.ts";
import type { PanelAuth } from "../../src/panel/auth.ts";
import { PanelServer } from "../../src/panel/server.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/settings.ts";
import type { DispatchContext } from "../../src/context/context.ts";
import { type EntryDeps, runToolCall } from "../../src/edge/entry.ts";
import type { StartedAgent } from "../../src/ports/types.ts";
import type { AuditInput } from "../../src/ports/audit.ts";
import type { Workspace } from "../../src/ports/workspace.ts";
import { MemoryWorld } from "./memory-world.ts";

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: () => unknown;
}

export interface Ask {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | object;
  /** Sent as the Host header; default 127.0.0.1:<port>. */
  host?: string;
}

export function ask(port: number, a: Ask): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = a.body === undefined ? undefined : typeof a.body === "string" ? a.body : JSON.stringify(a.body);
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: a.method ?? "GET",
        path: a.path,
        headers: {
          host: a.host ?? `127.0.0.1:${port}`,
          ...(body !== undefined ? { "content-length": Buffer.byteLength(body) } : {}),
          ...a.headers,
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export interface PanelWorld {
  world: MemoryWorld;
  shepherd: Shepherd;
  server: PanelServer;
  entry: EntryDeps;
  root: string;
  audited: AuditInput[];
  port: number;
  token: string;
  /** Bearer auth and the panel's own Origin: what a program (or the page) sends. */
  authed(extra?: Record<string, string>): Record<string, string>;
  /** A session as the page gets one for the token: its cookie (`name=value`), its key, and the two as the page sends them with its Origin. */
  session(): Promise<{ cookie: string; key: string; setCookie: string; headers: Record<string, string> }>;
  start(label?: string, agent?: string): Promise<StartedAgent>;
  close(): Promise<void>;
}

export async function panelWorld(
  o: { pageDir?: string; settings?: Partial<Settings>; projectTrusted?: boolean; workspace?: (cwd: string) => Workspace; auth?: PanelAuth } = {},
): Promise<PanelWorld> {
  const root = await mkdtemp(join(tmpdir(), "pi-shepherd-panel-"));
  const bundledDir = join(root, "bundled");
  const agentDir = join(root, "agent");
  const cwd = join(root, "work");
  await mkdir(bundledDir, { recursive: true });
  await mkdir(agentDir, { recursive: true });
  await mkdir(cwd, { recursive: true });
  await writeFile(join(bundledDir, "scout.md"), "---\nname: scout\ndescription: looks around\ntools: read, grep\n---\nLook.\n");
  // A repository's own agent: it runs only as trust allows.
  await mkdir(join(cwd, ".pi", "agents"), { recursive: true });
  await writeFile(join(cwd, ".pi", "agents", "helper.md"), "---\nname: helper\ndescription: the repository's\n---\nHelp.\n");
  const world = new MemoryWorld();
  const audited: AuditInput[] = [];
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: "panel-test",
    livenessIntervalMs: 50,
    ...(o.workspace ? { workspace: o.workspace(cwd), evidence: true } : { evidence: false }),
    audit: { record: (e) => audited.push(e) },
  });
  const context = async (): Promise<DispatchContext> => ({
    shepherd,
    settings: { ...DEFAULT_SETTINGS, ...o.settings },
    cwd,
    agentDir,
    bundledDir,
    trust: { hasUI: false, ...(o.projectTrusted ? { isProjectTrusted: () => true } : {}) },
  });
  const entry: EntryDeps = { context, doctor: async () => report([]), audit: (e) => audited.push(e) };
  const server = new PanelServer({ entry, ...(o.pageDir ? { pageDir: o.pageDir } : {}), ...(o.auth ? { auth: o.auth } : {}) });
  await server.start();
  const port = server.port;
  return {
    world,
    shepherd,
    server,
    entry,
    root,
    audited,
    port,
    token: server.auth.token,
    authed: (extra = {}) => ({ authorization: `Bearer ${server.auth.token}`, origin: `http://127.0.0.1:${port}`, ...extra }),
    session: async () => {
      const a = await ask(port, {
        method: "POST",
        path: "/api/v1/session",
        headers: { authorization: `Bearer ${server.auth.token}`, origin: `http://127.0.0.1:${port}`, "content-type": "application/json" },
        body: {},
      });
      assert.equal(a.status, 200, a.text);
      const { session: key, header } = a.json() as { session: string; header: string };
      const setCookie = String(a.headers["set-cookie"]);
      const cookie = setCookie.split(";")[0]!;
      return { cookie, key, setCookie, headers: { cookie, [header]: key, origin: `http://127.0.0.1:${port}` } };
    },
    start: async (label, agent = "scout") => (await runToolCall({ action: "start", agent, ...(label ? { label } : {}) }, entry)).details.agent as StartedAgent,
    close: async () => {
      await server.stop();
      await shepherd.dispose();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
  /** When the client had it whole (Date.now()). */
  at: number;
}

/** An open event stream: the events as they came, and a way to wait for one. */
export interface SseClient {
  status: number;
  events: SseEvent[];
  /** Resolves with the first event (from `from` on) that `ok` accepts. */
  next(ok: (e: SseEvent) => boolean, from?: number, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
  closed: Promise<void>;
}

export function openEvents(port: number, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/api/v1/events", headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false }, (res) => {
      const events: SseEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = "";
      let endResolve: () => void = () => undefined;
      const closed = new Promise<void>((r) => {
        endResolve = r;
      });
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const e: SseEvent = { event: "message", data: "", at: Date.now() };
          let any = false;
          for (const line of frame.split("\n")) {
            if (line.startsWith(":")) continue;
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "id") e.id = value;
            else if (field === "event") e.event = value;
            else if (field === "data") e.data = e.data ? `${e.data}\n${value}` : value;
            else continue;
            any = true;
          }
          if (any && (e.data !== "" || e.id !== undefined) && !(e.event === "message" && e.data === "")) events.push(e);
        }
        for (const w of [...waiters]) w();
      });
      res.on("close", () => endResolve());
      res.on("error", () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        events,
        closed,
        close: () => req.destroy(),
        next: (ok, from = 0, timeoutMs = 5000) =>
          new Promise((done, fail) => {
            const look = () => {
              const found = events.slice(from).find(ok);
              if (!found) return false;
              waiters.delete(look);
              clearTimeout(timer);
              done(found);
              return true;
            };
            const timer = setTimeout(() => {
              waiters.delete(look);
              fail(new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(events.slice(from))}`));
            }, timeoutMs);
            if (!look()) waiters.add(look);
          }),
      });
    });
    req.on("error", reject);
    req.end();
  });
}
