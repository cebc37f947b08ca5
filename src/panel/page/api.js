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

async function call(path, init) {
  let res;
  try {
    res = await fetch(path, { credentials: "same-origin", cache: "no-store", ...init });
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

/** Trades the URL's token for the session cookie. */
export function openSession(token) {
  return call("/api/v1/session", {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: "{}",
  });
}

export const sheepPath = (agentId, rest = "") => `/api/v1/sheep/${encodeURIComponent(agentId)}${rest}`;

export const EVENT_TYPES = ["sheep", "result", "message", "blocked", "exited", "closed", "reset"];

/**
 * The events stream, kept open. EventSource retries a dropped connection by itself (sending
 * Last-Event-ID); when it gives up (a refused or failed response) a new one is opened after a
 * growing pause. `status` hears "connecting", "live", "lost" and "back" (live again after a
 * loss: whatever was missed is to be read afresh).
 */
export class Live {
  constructor(onEvent, onStatus) {
    this.onEvent = onEvent;
    this.onStatus = onStatus;
    this.source = undefined;
    this.lost = false;
    this.pause = 1000;
    this.timer = undefined;
  }

  open() {
    clearTimeout(this.timer);
    this.source?.close();
    const source = new EventSource("/api/v1/events");
    this.source = source;
    this.onStatus(this.lost ? "lost" : "connecting");
    source.onopen = () => {
      this.pause = 1000;
      this.onStatus(this.lost ? "back" : "live");
      this.lost = false;
    };
    source.onerror = () => {
      if (this.source !== source) return;
      this.lost = true;
      this.onStatus("lost");
      if (source.readyState === EventSource.CLOSED) {
        this.timer = setTimeout(() => this.open(), this.pause);
        this.pause = Math.min(this.pause * 2, 15_000);
      }
    };
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (e) => {
        let data;
        try {
          data = JSON.parse(e.data);
        } catch {
          data = undefined;
        }
        this.onEvent(type, data, e.lastEventId);
      });
    }
  }
}
