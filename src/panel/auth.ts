/**
 * Who may talk to the panel: a request to the panel's own host name (DNS rebinding is refused
 * before anything else), with the token (Bearer) or a session the page got in exchange for it,
 * and for a session's state change an Origin of the panel's own.
 *
 * A session is two halves: an HttpOnly cookie and a key the page keeps in sessionStorage and sends
 * in a header. A browser sends 127.0.0.1's cookies to every port of 127.0.0.1 (a sheep's dev server
 * too), so the cookie alone opens nothing; the key is kept by origin, port included, and no
 * element (an image, a form) can send a header, so it alone opens nothing either.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { HttpError } from "./errors.ts";

/**
 * The session cookie's name on this port. A browser keeps cookies by host, not by port: two
 * shepherds' panels on 127.0.0.1 under one name would each overwrite the other's session.
 */
export function cookieName(port: number): string {
  return `pi_shepherd_panel_${port}`;
}
/** The header that carries a session's key. */
export const SESSION_HEADER = "x-pi-shepherd-session";
/** Sessions held at once; the oldest goes first. A page makes one per load. */
export const MAX_SESSIONS = 64;
/**
 * A session no request used for this long is let go: a page left open overnight, or a cookie and
 * key taken from one, opens nothing the next day. An event stream is no use of it: it only
 * listens, and it is ended at its next ping once its session is let go.
 */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/**
 * A token nothing showed for this long is let go, and the next URL printed has a new one: the
 * copy a browser keeps in its history files opens nothing once the panel stopped being used with it.
 */
export const TOKEN_IDLE_MS = 12 * 60 * 60 * 1000;
/**
 * Cookies of the panel's name looked at in one request: a page elsewhere may have tossed in its own,
 * one per path that prefixes a route's (about ten for the longest), each sent before the panel's (Path=/).
 */
const MAX_COOKIES_CHECKED = 32;

export type Credential = "bearer" | "cookie";

const digest = (s: string) => createHash("sha256").update(s).digest();

export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

interface Session {
  /** The digest of its key. */
  key: Buffer;
  /** When a request last showed it (ms). */
  used: number;
}

/**
 * What a panel keeps of its auth across a pi restart (auth-file.ts writes it): the token itself (a
 * URL printed before the restart must still open the page), and each session only as the digests
 * of its cookie and key, so the file alone makes no request a session's.
 */
export interface AuthSnapshot {
  token: string;
  tokenUsed: number;
  sessions: { cookie: string; key: string; used: number }[];
}

/** The token and the sessions of one panel; kept across a reload with the panel, and across a restart by auth-file.ts. */
export class PanelAuth {
  /** The digest of each session's cookie (hex), to its key's digest and last use. */
  private readonly sessions = new Map<string, Session>();
  private currentToken: string;
  private tokenDigest: Buffer;
  private tokenUsed: number;
  /**
   * Told of every change worth keeping: `now` for a new token or session (a restart right after
   * must know it), otherwise a use (the keeper may wait, as one lost use only shortens an idle time).
   */
  onChange: ((now: boolean) => void) | undefined;

  constructor(
    token: string = newSecret(),
    private readonly now: () => number = Date.now,
  ) {
    this.currentToken = token;
    this.tokenDigest = digest(token);
    this.tokenUsed = now();
  }

  /** A panel's auth as a snapshot left it: its sessions idle past SESSION_IDLE_MS are not taken back. */
  static restore(s: AuthSnapshot, now: () => number = Date.now): PanelAuth {
    const auth = new PanelAuth(s.token, now);
    auth.tokenUsed = s.tokenUsed;
    for (const x of s.sessions.slice(-MAX_SESSIONS)) {
      if (now() - x.used < SESSION_IDLE_MS) auth.sessions.set(x.cookie, { key: Buffer.from(x.key, "hex"), used: x.used });
    }
    return auth;
  }

  snapshot(): AuthSnapshot {
    const now = this.now();
    const sessions = [...this.sessions]
      .filter(([, s]) => now - s.used < SESSION_IDLE_MS)
      .map(([cookie, s]) => ({ cookie, key: s.key.toString("hex"), used: s.used }));
    return { token: this.currentToken, tokenUsed: this.tokenUsed, sessions };
  }

  /** The token a URL carries now: a new one when the last went unused for TOKEN_IDLE_MS (its sessions stay). */
  get token(): string {
    if (this.now() - this.tokenUsed >= TOKEN_IDLE_MS) {
      this.currentToken = newSecret();
      this.tokenDigest = digest(this.currentToken);
      this.tokenUsed = this.now();
      this.onChange?.(true);
    }
    return this.currentToken;
  }

  /** A fresh session for a request that showed the token: its cookie's value and its key. */
  newSession(): { cookie: string; key: string } {
    const session = { cookie: newSecret(), key: newSecret() };
    this.sessions.set(digest(session.cookie).toString("hex"), { key: digest(session.key), used: this.now() });
    for (const old of this.sessions.keys()) {
      if (this.sessions.size <= MAX_SESSIONS) break;
      this.sessions.delete(old);
    }
    this.onChange?.(true);
    return session;
  }

  /**
   * How the request proves it knows the token; undefined when it does not. The token's or the
   * session's use counts from now (unless `touch` is false: an event stream asking whether its
   * credential still holds); either is let go only after its idle time with none.
   */
  credential(req: IncomingMessage, port: number, touch = true): Credential | undefined {
    const now = this.now();
    const auth = req.headers.authorization;
    if (typeof auth === "string") {
      const m = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(auth.trim());
      if (!m || now - this.tokenUsed >= TOKEN_IDLE_MS) return undefined;
      // Hashes of equal length, so the comparison takes as long for every wrong token.
      if (!timingSafeEqual(digest(m[1]!), this.tokenDigest)) return undefined;
      if (touch) {
        this.tokenUsed = now;
        this.onChange?.(false);
      }
      return "bearer";
    }
    const key = req.headers[SESSION_HEADER];
    if (typeof key !== "string") return undefined;
    // Every cookie of the name, not the first: a page on another port of 127.0.0.1 can set one of
    // the same name with a longer path, which the browser sends first.
    for (const cookie of cookieValues(req.headers.cookie, cookieName(port))) {
      const hex = digest(cookie).toString("hex");
      const session = this.sessions.get(hex);
      if (session === undefined) continue;
      if (now - session.used >= SESSION_IDLE_MS) {
        this.sessions.delete(hex);
        continue;
      }
      if (!timingSafeEqual(digest(key), session.key)) continue;
      if (touch) {
        session.used = now;
        this.onChange?.(false);
      }
      return "cookie";
    }
    return undefined;
  }

  /** A `Bearer` credential only: what the session exchange needs. */
  hasToken(req: IncomingMessage, port: number): boolean {
    return this.credential(req, port) === "bearer";
  }
}

/** The values of every cookie of that name in a Cookie header, at most MAX_COOKIES_CHECKED. */
export function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  if (!header) return values;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    values.push(part.slice(eq + 1).trim());
    if (values.length >= MAX_COOKIES_CHECKED) break;
  }
  return values;
}

/** The names the panel answers to on its port: what a browser sends as Host, and as Origin with http://. */
export function ownHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/** A Host of another name is a page that had its name resolved to 127.0.0.1 (DNS rebinding). */
export function checkHost(req: IncomingMessage, port: number): void {
  const host = req.headers.host;
  if (typeof host !== "string" || !ownHosts(port).includes(host.toLowerCase())) {
    throw new HttpError(421, "bad_host", `this panel answers only to ${ownHosts(port).join(" or ")}; use the URL /shepherd panel url prints.`);
  }
}

/**
 * Any request with an Origin must come from the panel's own; a state change by cookie must say
 * where it comes from at all (a browser always does), so no other site can make the page's
 * browser act with its cookie.
 */
export function checkOrigin(req: IncomingMessage, port: number, credential: Credential | undefined, changes: boolean): void {
  const origin = req.headers.origin;
  const own = ownHosts(port).map((h) => `http://${h}`);
  if (typeof origin === "string" && !own.includes(origin.toLowerCase())) {
    throw new HttpError(403, "bad_origin", `requests from ${JSON.stringify(origin)} are refused; only the panel's own page (${own[0]}) may send them.`);
  }
  if (req.headers["sec-fetch-site"] === "cross-site") throw new HttpError(403, "bad_origin", "cross-site requests are refused.");
  if (changes && credential === "cookie" && typeof origin !== "string") {
    throw new HttpError(403, "bad_origin", "a change made with the panel's cookie needs the Origin header of the panel's page.");
  }
}
