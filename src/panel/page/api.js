/**
 * The page's one way to the shepherd: JSON over fetch with the session cookie, and the events
 * stream. The token from the URL's fragment is sent once, in a header, for the cookie; it never
 * goes into a URL the page requests.
 */

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  /** The shepherd's words: its messages start with their [code] already. */
  get text() {
    return this.message.startsWith("[") ? this.message : `[${this.code}] ${this.message}`;
  }
}

/**
 * The session's key: the half of the session a cookie cannot carry (a browser sends 127.0.0.1's
 * cookies to every port; sessionStorage is kept by origin, port included). It lasts while the tab does.
 */
const SESSION_KEY = "pi-shepherd-session";
const SESSION_HEADER = "x-pi-shepherd-session";

export function withSession(headers) {
  const key = sessionStorage.getItem(SESSION_KEY);
  return key ? { ...headers, [SESSION_HEADER]: key } : headers;
}

async function call(path, init) {
  let res;
  try {
    res = await fetch(path, { credentials: "same-origin", cache: "no-store", ...init, headers: withSession(init.headers ?? {}) });
  } catch (e) {
    throw new ApiError(
      0,
      "unreachable",
      `the shepherd does not answer (${e instanceof Error ? e.message : String(e)}): it quit, or its panel is off. This page reconnects when the panel is back on this port; /shepherd panel prints its address.`,
    );
  }
  if (res.status === 204) return undefined;
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const code = typeof data?.code === "string" ? data.code : `http_${res.status}`;
    const message = typeof data?.message === "string" ? data.message : text.slice(0, 300) || res.statusText;
    throw new ApiError(res.status, code, message);
  }
  return data;
}

export function get(path) {
  return call(path, { headers: { Accept: "application/json" } });
}

/** A state-changing request: always a JSON body (the shepherd refuses any other). */
export function post(path, body = {}) {
  return call(path, { method: "POST", headers: { Accept: "application/json", "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

/** Trades the URL's token for a session: its cookie (set by the answer) and its key (kept here). */
export async function openSession(token) {
  const r = await call("/api/v1/session", {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: "{}",
  });
  if (typeof r?.session === "string") sessionStorage.setItem(SESSION_KEY, r.session);
}

export const sheepPath = (agentId, rest = "") => `/api/v1/sheep/${encodeURIComponent(agentId)}${rest}`;

export const EVENT_TYPES = ["sheep", "result", "message", "blocked", "exited", "closed", "notify", "reset"];

/**
 * The events stream, kept open: read with fetch (an EventSource cannot send the session's key).
 * A stream that ends or fails is opened again after a growing pause, with Last-Event-ID, so the
 * shepherd sends what it still holds of what was missed. `status` hears "connecting", "live",
 * "lost" and "back" (live again after a loss: whatever was missed is to be read afresh).
 */
export class Live {
  constructor(onEvent, onStatus) {
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.abort = undefined;
    this.lastId = "";
    this.lost = false;
    this.pause = 1000;
    this.timer = undefined;
  }

  async open() {
    clearTimeout(this.timer);
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    this.onStatus(this.lost ? "lost" : "connecting");
    try {
      const headers = withSession({ Accept: "text/event-stream" });
      if (this.lastId) headers["Last-Event-ID"] = this.lastId;
      const res = await fetch("/api/v1/events", { credentials: "same-origin", cache: "no-store", headers, signal: abort.signal });
      if (!res.ok || !res.body) throw new Error(`the stream answered ${res.status}`);
      this.pause = 1000;
      this.onStatus(this.lost ? "back" : "live");
      this.lost = false;
      await this.read(res.body);
    } catch {
      // a failed or refused stream: told below, like one that ended
    }
    if (this.abort !== abort) return;
    this.lost = true;
    this.onStatus("lost");
    this.timer = setTimeout(() => this.open(), this.pause);
    this.pause = Math.min(this.pause * 2, 15_000);
  }

  /** Frames end at an empty line; `id:`, `event:` and `data:` lines make one event, `:` lines are pings. */
  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, "\n");
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        this.frame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  }

  frame(text) {
    let type = "message";
    const data = [];
    for (const line of text.split("\n")) {
      const colon = line.indexOf(":");
      if (colon === 0) continue;
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") this.lastId = value;
      else if (field === "event") type = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0 || !EVENT_TYPES.includes(type)) return;
    let parsed;
    try {
      parsed = JSON.parse(data.join("\n"));
    } catch {
      parsed = undefined;
    }
    this.onEvent(type, parsed, this.lastId);
  }
}
