/**
 * The durable outbox: one private file per event (0600, in a 0700 dir), written before anything is
 * sent, so a shepherd that quits or crashes leaves its pending notices for the next one. An event's
 * file is named by a hash of its key and created exclusively (a link of a complete temporary file),
 * so the same happening seen twice, or by two shepherds, is one entry. Each entry keeps, per channel,
 * whether it went out, its tries and when to try again; once every channel took it, its text is
 * dropped and the entry stays (to refuse the key again) until it expires.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { join } from "node:path";
import { HERD_EVENT_KINDS, type HerdEvent } from "../ports/events.ts";

/** An entry is dropped this long after its event, sent or not: a day-old "waiting" tells nothing true. */
export const EXPIRY_MS = 24 * 60 * 60 * 1000;
/** The most entries the outbox holds; past it a new event is dropped (a flood must not fill the disk). */
export const MAX_ENTRIES = 1000;
/** The most bytes one entry's file may hold when read back. */
export const MAX_ENTRY_BYTES = 64 * 1024;
/** The most characters of an event's text kept in its entry. */
export const MAX_EVENT_TEXT = 2000;

export interface ChannelState {
  /** When it went out to this channel (ms). */
  sent?: number;
  /** Failed tries so far. */
  tries: number;
  /** Not before this time (ms): the backoff after a failure. */
  next: number;
  /** The notice it went (or goes) out in: the same id on a retry, so a receiver can drop a copy. */
  notice?: string;
  /** Told only as a count ("N more") under the rate limit. */
  counted?: true;
}

export interface OutboxEntry {
  v: 1;
  id: string;
  event: HerdEvent;
  channels: Record<string, ChannelState>;
}

export function entryId(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 32);
}

const ENTRY_FILE = /^[0-9a-f]{32}\.json$/;

export class Outbox {
  constructor(readonly dir: string) {}

  private ensureDir(): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // A dir made by an older umask, or by hand, is made private again.
    fs.chmodSync(this.dir, 0o700);
  }

  /**
   * Writes the event for these channels unless its key is already there; true when it was new.
   * Synchronous and complete before it returns: what is sent is always on disk first.
   */
  add(event: HerdEvent, channels: readonly string[]): boolean {
    if (channels.length === 0) return false;
    this.ensureDir();
    const id = entryId(event.key);
    const file = join(this.dir, `${id}.json`);
    if (fs.existsSync(file)) return false;
    if (this.names().length >= MAX_ENTRIES) return false;
    const text = event.text.length > MAX_EVENT_TEXT ? `${event.text.slice(0, MAX_EVENT_TEXT - 1)}…` : event.text;
    const entry: OutboxEntry = {
      v: 1,
      id,
      event: { ...event, key: event.key.slice(0, 500), text },
      channels: Object.fromEntries(channels.map((c) => [c, { tries: 0, next: 0 }])),
    };
    const tmp = join(this.dir, `.${id}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600, flag: "wx" });
    try {
      fs.linkSync(tmp, file); // exclusive: another shepherd's copy of the same key wins, ours is dropped
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  /** Rewrites an entry whole (atomic rename): only the sender (who holds the lock) changes entries. */
  save(entry: OutboxEntry): void {
    this.ensureDir();
    const file = join(this.dir, `${entry.id}.json`);
    const tmp = join(this.dir, `.${entry.id}.${process.pid}.save.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    fs.renameSync(tmp, file);
  }

  remove(id: string): void {
    fs.rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  private names(): string[] {
    try {
      return fs.readdirSync(this.dir).filter((n) => ENTRY_FILE.test(n));
    } catch {
      return [];
    }
  }

  /** Every entry, oldest event first; a file that is not a well-formed entry (or a regular file) is removed. */
  all(): OutboxEntry[] {
    const out: OutboxEntry[] = [];
    for (const name of this.names()) {
      const entry = this.read(join(this.dir, name));
      if (entry && `${entry.id}.json` === name) out.push(entry);
      else fs.rmSync(join(this.dir, name), { force: true });
    }
    return out.sort((a, b) => a.event.at - b.event.at);
  }

  private read(file: string): OutboxEntry | undefined {
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.size > MAX_ENTRY_BYTES) return undefined;
      const buf = Buffer.alloc(st.size);
      fs.readSync(fd, buf, 0, st.size, 0);
      return validEntry(JSON.parse(buf.toString("utf8")));
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
}

const str = (v: unknown, max: number) => typeof v === "string" && v.length <= max;
const num = (v: unknown) => typeof v === "number" && Number.isFinite(v);

/** An entry read back is checked like anything read from disk: its shape, kinds and sizes. */
export function validEntry(v: unknown): OutboxEntry | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.v !== 1 || !str(o.id, 32) || !/^[0-9a-f]{32}$/.test(o.id as string)) return undefined;
  const e = o.event as Record<string, unknown> | undefined;
  if (typeof e !== "object" || e === null) return undefined;
  if (!HERD_EVENT_KINDS.includes(e.kind as HerdEvent["kind"]) || !str(e.key, 500) || !str(e.host, 200) || !str(e.text, MAX_EVENT_TEXT) || !num(e.at))
    return undefined;
  for (const k of ["agentId", "label", "messageId", "promptId"]) if (e[k] !== undefined && !str(e[k], 300)) return undefined;
  const ch = o.channels as Record<string, unknown> | undefined;
  if (typeof ch !== "object" || ch === null || Array.isArray(ch)) return undefined;
  for (const [name, s] of Object.entries(ch)) {
    if (!/^[0-9]{1,2}-[a-z]{1,10}-[0-9a-f]{8}$/.test(name) || typeof s !== "object" || s === null) return undefined;
    const c = s as Record<string, unknown>;
    if (!num(c.tries) || !num(c.next) || (c.sent !== undefined && !num(c.sent)) || (c.notice !== undefined && !str(c.notice, 64))) return undefined;
  }
  return v as OutboxEntry;
}
