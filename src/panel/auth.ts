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

export type Credential = "bearer" | "cookie";

const digest = (s: string) => createHash("sha256").update(s).digest();

export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The token and the sessions of one panel; kept across a reload with the panel. */
export class PanelAuth {
  /** The digest of each session's cookie (hex), to the digest of its key. */
  private readonly sessions = new Map<string, Buffer>();
  private tokenDigest: Buffer;

  constructor(readonly token: string = newSecret()) {
    this.tokenDigest = digest(token);
  }

  /** A fresh session for a request that showed the token: its cookie's value and its key. */
  newSession(): { cookie: string; key: string } {
    const session = { cookie: newSecret(), key: newSecret() };
    this.sessions.set(digest(session.cookie).toString("hex"), digest(session.key));
    for (const old of this.sessions.keys()) {
      if (this.sessions.size <= MAX_SESSIONS) break;
      this.sessions.delete(old);
    }
    return session;
  }

  /** How the request proves it knows the token; undefined when it does not. */
  credential(req: IncomingMessage, port: number): Credential | undefined {
    const auth = req.headers.authorization;
    if (typeof auth === "string") {
      const m = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(auth.trim());
      // Hashes of equal length, so the comparison takes as long for every wrong token.
      if (m && timingSafeEqual(digest(m[1]!), this.tokenDigest)) return "bearer";
      return undefined;
    }
    const cookie = cookieValue(req.headers.cookie, cookieName(port));
    const key = req.headers[SESSION_HEADER];
    if (cookie === undefined || typeof key !== "string") return undefined;
    const want = this.sessions.get(digest(cookie).toString("hex"));
    return want !== undefined && timingSafeEqual(digest(key), want) ? "cookie" : undefined;
  }

  /** A `Bearer` credential only: what the session exchange needs. */
  hasToken(req: IncomingMessage, port: number): boolean {
    return this.credential(req, port) === "bearer";
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
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
