/**
 * The egress proxy of sandboxed sheep: one Unix socket per sheep (so the proxy knows who asks without
 * trusting anything the sheep says), speaking HTTP `CONNECT host:port` (a tunnel, what pi's undici
 * uses for http and https alike) and plain HTTP requests with an absolute URI (forwarded). Each
 * attempt is decided by the sheep's policy, connected to the one address that was checked, logged,
 * and a refusal told to the audit sink. node:http and node:net, not a proxy library: the libraries at
 * hand connect by name themselves, a second lookup the address check could not see.
 *
 * Bounds: request head size, lookup and connect time, idle time of a tunnel or forward, tunnels open
 * at once per sheep. Every socket's error ends that socket and its peer only: one sheep's tunnel
 * cannot stall or break another's (each sheep has its own server).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, rename, unlink } from "node:fs/promises";
import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { dirname, join } from "node:path";
import type { Duplex } from "node:stream";
import { ShepherdError } from "../../domain/errors.ts";
import type { AuditInput } from "../../ports/audit.ts";
import { EgressLog, type EgressEntry, type EgressLogOptions } from "./log.ts";
import { type EgressPolicy, listed, normalHost, pickAddress, type RefusalReason, splitHostPort } from "./policy.ts";

/** A name's addresses, in the order they should be tried. */
export type Lookup = (host: string) => Promise<string[]>;

export interface EgressProxyOptions {
  /** How names are resolved (tests give their own); default node's lookup with all addresses. */
  lookup?: Lookup;
  lookupTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** A tunnel or forward with no byte either way for this long is ended. */
  idleTimeoutMs?: number;
  /** Tunnels and forwards one sheep may have open at once. */
  maxTunnels?: number;
  /** Cap of a request's head (request line and headers). */
  maxHeaderBytes?: number;
  /** Where refusals are told (the audit sink, stamped by its owner). */
  audit?: (event: AuditInput) => void;
  /** Refusals of one sheep told to the audit sink per minute at most (default 30); the egress log has every one. */
  auditPerMinute?: number;
  now?: () => number;
}

export interface SheepEgressOptions {
  /** The sheep's socket; its directory is made 0700 and the socket 0600. Keep it short: a Unix socket path has ~107 bytes. */
  socketPath: string;
  policy: EgressPolicy;
  /** The egress log file, in the sheep's own directory. */
  logFile: string;
  log?: EgressLogOptions;
}

interface SheepEntry {
  server: Server;
  policy: EgressPolicy;
  log: EgressLog;
  socketPath: string;
  /** The socket file as made here: a newer process's socket at that path since (a new agent's on that host) is never removed. */
  ino: number;
  active: number;
  open: Set<Duplex>;
  /** Refusals told to the audit sink in the current minute, and those left untold since the last told one. */
  audit: { windowStart: number; told: number; untold: number };
}

const defaultLookup: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class EgressProxy {
  private readonly sheep = new Map<string, SheepEntry>();
  private readonly lookup: Lookup;
  private readonly lookupTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly maxTunnels: number;
  private readonly maxHeaderBytes: number;
  private readonly now: () => number;
  private readonly auditPerMinute: number;

  constructor(private readonly o: EgressProxyOptions = {}) {
    this.lookup = o.lookup ?? defaultLookup;
    this.lookupTimeoutMs = o.lookupTimeoutMs ?? 5000;
    this.connectTimeoutMs = o.connectTimeoutMs ?? 10_000;
    // pi's own idle timeout is 5 min: a streaming answer may pause that long.
    this.idleTimeoutMs = o.idleTimeoutMs ?? 300_000;
    this.maxTunnels = o.maxTunnels ?? 32;
    this.maxHeaderBytes = o.maxHeaderBytes ?? 16 * 1024;
    this.now = o.now ?? Date.now;
    this.auditPerMinute = o.auditPerMinute ?? 30;
  }

  /** Starts serving one sheep on its own socket. */
  async open(agentId: string, s: SheepEgressOptions): Promise<EgressLog> {
    if (this.sheep.has(agentId)) throw new ShepherdError("invalid_params", `egress proxy: ${agentId} has a socket already`);
    const dir = dirname(s.socketPath);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // Never a link (chmod and listen would follow it) nor another user's directory.
    const st = await lstat(dir);
    if (!st.isDirectory() || st.uid !== process.getuid?.()) {
      throw new ShepherdError("invalid_params", `egress proxy: ${dir} is no directory of this user's (a link?)`);
    }
    await chmod(dir, 0o700);
    const old = await lstat(s.socketPath).catch(() => undefined);
    if (old && !old.isSocket()) throw new ShepherdError("invalid_params", `egress proxy: ${s.socketPath} exists and is no socket`);
    const log = new EgressLog(s.logFile, s.log);
    const server = createServer({ maxHeaderSize: this.maxHeaderBytes, headersTimeout: 10_000, requestTimeout: 0 });
    const entry: SheepEntry = {
      server,
      policy: s.policy,
      log,
      socketPath: s.socketPath,
      ino: 0,
      active: 0,
      open: new Set(),
      audit: { windowStart: 0, told: 0, untold: 0 },
    };
    server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(agentId, entry, req, socket, head));
    server.on("request", (req: IncomingMessage, res: ServerResponse) => void this.forward(agentId, entry, req, res));
    // A head that is no HTTP, or over the cap: told, then the connection ends (it never reached a decision).
    server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      const status = err.code === "HPE_HEADER_OVERFLOW" ? "431 Request Header Fields Too Large" : "400 Bad Request";
      if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      else socket.destroy();
    });
    server.on("connection", (socket: Socket) => {
      entry.open.add(socket);
      socket.on("close", () => entry.open.delete(socket));
    });
    // Bound under a name of its own, then renamed over the socket's path (a stale one replaced at once):
    // closing a server unlinks the name it was bound at, which is then no longer the sheep's socket, so an
    // older process that closes late (an agent whose link dropped) never removes a newer one's.
    const bound = join(dir, `.${randomBytes(4).toString("hex")}`);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(bound, () => {
        server.off("error", reject);
        resolve();
      });
    });
    await chmod(bound, 0o600);
    await rename(bound, s.socketPath);
    entry.ino = (await lstat(s.socketPath)).ino;
    this.sheep.set(agentId, entry);
    return log;
  }

  /** The sheep's log (counts and last entries), while its socket is open. */
  logOf(agentId: string): EgressLog | undefined {
    return this.sheep.get(agentId)?.log;
  }

  /** Ends the sheep's socket, its tunnels, and removes the socket file. */
  async close(agentId: string): Promise<void> {
    const e = this.sheep.get(agentId);
    if (!e) return;
    this.sheep.delete(agentId);
    for (const s of e.open) s.destroy();
    await new Promise<void>((resolve) => e.server.close(() => resolve()));
    await e.log.flushed();
    const now = await lstat(e.socketPath).catch(() => undefined);
    if (now?.ino === e.ino) await unlink(e.socketPath).catch(() => {});
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sheep.keys()].map((id) => this.close(id)));
  }

  /** The address to connect to, or why not: by the name's spelling first, then by the one lookup's answer. */
  private async decide(policy: EgressPolicy, host: string, port: number): Promise<{ address: string } | { reason: RefusalReason }> {
    const h = normalHost(host);
    if (!listed(policy, h, port)) return { reason: "not_allowed" };
    let addresses: string[];
    if (isIP(h) !== 0) addresses = [h];
    else {
      try {
        addresses = await withTimeout(this.lookup(h), this.lookupTimeoutMs);
      } catch {
        return { reason: "unresolved" };
      }
    }
    const pick = pickAddress(policy, addresses, port);
    return pick.address !== undefined ? { address: pick.address } : { reason: pick.reason };
  }

  private record(agentId: string, e: SheepEntry, entry: EgressEntry): void {
    e.log.add(entry);
    if (entry.verdict !== "refused" || !this.o.audit) return;
    // The audit log rotates by size: a sheep trying a million hosts must not push the herd's history out of it.
    // Every attempt stays in the sheep's own egress log; the audit log gets at most auditPerMinute of them.
    const a = e.audit;
    const now = this.now();
    if (now - a.windowStart >= 60_000) {
      a.windowStart = now;
      a.told = 0;
    }
    if (a.told >= this.auditPerMinute) {
      a.untold++;
      return;
    }
    a.told++;
    const untold = a.untold;
    a.untold = 0;
    this.o.audit({
      event: "refusal",
      action: "egress",
      agentId,
      reason: entry.reason ?? "not_allowed",
      target: entry.target,
      ...(untold > 0 ? { error: `${untold} more egress refusals before this one are in the sheep's egress log only` } : {}),
    });
  }

  private async tunnel(agentId: string, e: SheepEntry, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const started = this.now();
    const time = new Date(started).toISOString();
    const target = (req.url ?? "").slice(0, 300);
    client.on("error", () => client.destroy());
    const refuse = (reason: RefusalReason, status: number) => {
      this.record(agentId, e, { time, target, method: "CONNECT", verdict: "refused", reason, bytesUp: 0, bytesDown: 0, durationMs: this.now() - started });
      client.end(
        `HTTP/1.1 ${status} ${status === 403 ? "Forbidden" : "Bad Gateway"}\r\nX-Egress-Refused: ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
    };
    const hp = splitHostPort(target);
    if (!hp || hp.port === undefined) return refuse("bad_target", 400);
    if (e.active >= this.maxTunnels) return refuse("too_many", 503);
    e.active++;
    let ended = false;
    let up = 0;
    let down = 0;
    let address: string | undefined;
    let upstream: Socket | undefined;
    const end = (reason?: RefusalReason) => {
      if (ended) return;
      ended = true;
      e.active--;
      client.destroy();
      upstream?.destroy();
      if (address === undefined) return;
      const entry: EgressEntry = {
        time,
        target,
        method: "CONNECT",
        verdict: "allowed",
        address,
        bytesUp: up,
        bytesDown: down,
        durationMs: this.now() - started,
      };
      this.record(agentId, e, reason ? { ...entry, reason } : entry);
    };
    client.once("close", () => end());
    const verdict = await this.decide(e.policy, hp.host, hp.port);
    if (ended) return;
    if ("reason" in verdict) {
      ended = true;
      e.active--;
      return refuse(verdict.reason, 403);
    }
    address = verdict.address;
    const sock = connect({ host: address, port: hp.port });
    let connected = false;
    upstream = sock;
    const timer = setTimeout(() => {
      client.end(`HTTP/1.1 504 Gateway Timeout\r\nX-Egress-Refused: connect_failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      end("connect_failed");
    }, this.connectTimeoutMs);
    sock.on("error", () => {
      clearTimeout(timer);
      const connecting = !connected;
      if (connecting && !ended) client.end(`HTTP/1.1 502 Bad Gateway\r\nX-Egress-Refused: connect_failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      end(connecting ? "connect_failed" : undefined);
    });
    sock.once("connect", () => {
      connected = true;
      clearTimeout(timer);
      if (ended) return;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) {
        up += head.length;
        sock.write(head);
      }
      client.on("data", (d: Buffer) => {
        up += d.length;
      });
      sock.on("data", (d: Buffer) => {
        down += d.length;
      });
      client.pipe(sock);
      sock.pipe(client);
      for (const s of [client, sock]) {
        if ("setTimeout" in s && typeof s.setTimeout === "function") s.setTimeout(this.idleTimeoutMs, () => end());
      }
      sock.once("close", () => end());
    });
  }

  private async forward(agentId: string, e: SheepEntry, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = this.now();
    const time = new Date(started).toISOString();
    const method = (req.method ?? "GET").slice(0, 16);
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? "");
    } catch {}
    const target = url ? `${url.hostname}:${url.port || 80}` : (req.url ?? "").slice(0, 300);
    const refuse = (reason: RefusalReason, status: number) => {
      this.record(agentId, e, { time, target, method, verdict: "refused", reason, bytesUp: 0, bytesDown: 0, durationMs: this.now() - started });
      res.writeHead(status, { "x-egress-refused": reason, "content-length": "0", connection: "close" }).end();
      req.resume();
    };
    if (url?.protocol !== "http:") return refuse("bad_target", 400);
    if (e.active >= this.maxTunnels) return refuse("too_many", 503);
    e.active++;
    const port = url.port ? Number(url.port) : 80;
    let ended = false;
    let up = 0;
    let down = 0;
    let address: string | undefined;
    const end = (reason?: RefusalReason) => {
      if (ended) return;
      ended = true;
      e.active--;
      if (address === undefined) return;
      const entry: EgressEntry = { time, target, method, verdict: "allowed", address, bytesUp: up, bytesDown: down, durationMs: this.now() - started };
      this.record(agentId, e, reason ? { ...entry, reason } : entry);
    };
    const verdict = await this.decide(e.policy, url.hostname, port);
    if ("reason" in verdict) {
      ended = true;
      e.active--;
      return refuse(verdict.reason, 403);
    }
    address = verdict.address;
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    const out = httpRequest({ host: address, port, method, path: `${url.pathname}${url.search}`, headers, agent: false, setHost: false });
    out.setTimeout(this.idleTimeoutMs, () => out.destroy(new Error("idle")));
    const connectTimer = setTimeout(() => out.destroy(new Error("connect timeout")), this.connectTimeoutMs);
    out.once("socket", (s: Socket) => s.once("connect", () => clearTimeout(connectTimer)));
    req.on("data", (d: Buffer) => {
      up += d.length;
    });
    req.pipe(out);
    out.on("response", (r) => {
      const back = { ...r.headers };
      for (const h of HOP_BY_HOP) delete back[h];
      res.writeHead(r.statusCode ?? 502, back);
      r.on("data", (d: Buffer) => {
        down += d.length;
      });
      r.pipe(res);
      r.once("end", () => end());
      r.once("error", () => {
        res.destroy();
        end();
      });
    });
    out.on("error", () => {
      clearTimeout(connectTimer);
      const failed = !res.headersSent;
      if (failed) res.writeHead(502, { "x-egress-refused": "connect_failed", "content-length": "0", connection: "close" }).end();
      else res.destroy();
      end(failed ? "connect_failed" : undefined);
    });
    res.once("close", () => {
      if (!ended) out.destroy();
      end();
    });
  }
}

const HOP_BY_HOP = ["connection", "proxy-connection", "proxy-authorization", "keep-alive", "te", "trailer", "upgrade"];

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("timeout")), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });
}
