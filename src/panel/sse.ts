/**
 * The event stream: clients held open, each event sent to all with an id, and the last
 * RING_SIZE events (MAX_RING_BYTES at most) kept so a client that reconnects with Last-Event-ID
 * misses nothing still held (what it missed, when that fits in MAX_UNSENT_BYTES; else one reset).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { COMMON_HEADERS, HttpError } from "./errors.ts";

export const MAX_CLIENTS = 100;
/** Events held for replay, at most, and the most bytes they may hold together. */
export const RING_SIZE = 1024;
export const MAX_RING_BYTES = 256 * 1024;
/**
 * The most one event may be: a larger one would be dropped with its client (past MAX_UNSENT_BYTES)
 * or push the whole ring out. It goes out as a reset instead, and clients fetch what is new.
 */
export const MAX_EVENT_BYTES = 128 * 1024;
/** A client that leaves this much unsent is not reading: it is let go. */
export const MAX_UNSENT_BYTES = 256 * 1024;
export const PING_MS = 15_000;

/** `notify`: a notice of the `notify` setting's browser channel (src/notify), which the page shows once the person allowed it. */
export type EventName = "sheep" | "result" | "message" | "blocked" | "exited" | "closed" | "notify" | "reset";

interface Held {
  id: number;
  frame: string;
  bytes: number;
}

/** Whether a client's credential still holds: asked at each ping. */
type StillAllowed = () => boolean;

export class SseHub {
  private readonly clients = new Map<ServerResponse, StillAllowed>();
  private readonly ring: Held[] = [];
  private ringBytes = 0;
  /**
   * Ids only grow, and start at the clock's microseconds: a reloaded panel's ids are above its
   * predecessor's, so a client's old id is known to be older than anything held.
   */
  private lastId = Date.now() * 1000;
  private ping: NodeJS.Timeout | undefined;

  get size(): number {
    return this.clients.size;
  }

  /** What the ring holds now: events and their bytes. */
  get held(): { events: number; bytes: number } {
    return { events: this.ring.length, bytes: this.ringBytes };
  }

  /**
   * Takes a client; replays what it missed, or tells it to fetch everything again. A client whose
   * credential no longer holds (`allowed`: its session or token let go) is ended at the next ping.
   */
  open(req: IncomingMessage, res: ServerResponse, onClose?: () => void, allowed: StillAllowed = () => true): void {
    if (this.clients.size >= MAX_CLIENTS) throw new HttpError(503, "too_many_clients", `${MAX_CLIENTS} event streams are open; close one first.`);
    res.writeHead(200, { ...COMMON_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive", "x-accel-buffering": "no" });
    res.write("retry: 1000\n\n");
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true);
    this.clients.set(res, allowed);
    const done = () => {
      if (!this.clients.delete(res)) return;
      if (this.clients.size === 0) this.stopPing();
      onClose?.();
    };
    res.on("close", done);
    res.on("error", done);
    const last = lastEventId(req);
    if (last !== undefined) this.replay(res, last);
    this.startPing();
  }

  /** Sends one event to every client; returns its id. */
  send(event: Exclude<EventName, "reset">, data: unknown): number {
    const id = ++this.lastId;
    let frame = `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    let bytes = Buffer.byteLength(frame);
    if (bytes > MAX_EVENT_BYTES) {
      frame = `id: ${id}\nevent: reset\ndata: {}\n\n`;
      bytes = Buffer.byteLength(frame);
    }
    this.ring.push({ id, frame, bytes });
    this.ringBytes += bytes;
    while (this.ring.length > RING_SIZE || this.ringBytes > MAX_RING_BYTES) this.ringBytes -= this.ring.shift()!.bytes;
    for (const res of this.clients.keys()) this.write(res, frame);
    return id;
  }

  /** Ends every stream (the panel stops); clients reconnect to the next panel by themselves. */
  closeAll(): void {
    this.stopPing();
    for (const res of [...this.clients.keys()]) res.end();
    this.clients.clear();
  }

  private replay(res: ServerResponse, last: number): void {
    const first = this.ring[0]?.id;
    // What it saw last is held (or is the newest): everything after it. Otherwise it missed more than is held.
    if (last === this.lastId) return;
    if (first !== undefined && last >= first - 1 && last < this.lastId) {
      const missed = this.ring.filter((held) => held.id > last);
      // More than a client may leave unsent would drop it in the middle of the replay: it reads everything afresh instead.
      if (missed.reduce((n, held) => n + held.bytes, 0) <= MAX_UNSENT_BYTES) {
        for (const held of missed) this.write(res, held.frame);
        return;
      }
    }
    this.write(res, `id: ${this.lastId}\nevent: reset\ndata: {}\n\n`);
  }

  private write(res: ServerResponse, frame: string): void {
    if (res.writableLength > MAX_UNSENT_BYTES) {
      res.destroy();
      return;
    }
    res.write(frame);
  }

  private startPing(): void {
    if (this.ping) return;
    this.ping = setInterval(() => {
      for (const [res, allowed] of this.clients) {
        if (allowed()) this.write(res, ": ping\n\n");
        else res.end();
      }
    }, PING_MS);
    this.ping.unref();
  }

  private stopPing(): void {
    clearInterval(this.ping);
    this.ping = undefined;
  }
}

function lastEventId(req: IncomingMessage): number | undefined {
  const raw = req.headers["last-event-id"];
  if (typeof raw !== "string" || !/^\d{1,16}$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}
