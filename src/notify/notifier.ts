/**
 * The notifier: the core's events into the outbox (written before anything is sent), and from
 * there to each channel that wants them. Events of one sheep within COALESCE_MS go as one notice;
 * each channel sends at most RATE_NOTICES in any RATE_WINDOW_MS, the last one of a full window
 * carrying an "N more" line for what it holds back; a channel that fails is tried again with
 * backoff until the entry expires (EXPIRY_MS). Only the holder of the sender lock sends.
 */
import { createHash } from "node:crypto";
import type { HerdEvent, HerdEventKind } from "../ports/events.ts";
import type { ChannelType } from "./settings.ts";
import { buildNotice, type Held, type Notice } from "./notice.ts";
import { EXPIRY_MS, type Outbox, type OutboxEntry } from "./outbox.ts";
import type { SenderLock } from "./lock.ts";

/** Events of one sheep (or host) within this long of its first go as one notice. */
export const COALESCE_MS = 10_000;
/** Notices one channel sends at most in any RATE_WINDOW_MS. */
export const RATE_NOTICES = 6;
export const RATE_WINDOW_MS = 60_000;
/** The wait after a channel's first failure, doubled each failure up to BACKOFF_MAX_MS. */
export const BACKOFF_FIRST_MS = 5_000;
export const BACKOFF_MAX_MS = 5 * 60_000;
/** How often a running notifier looks at its outbox. */
export const TICK_MS = 1_000;
/** With nothing pending, the outbox is read again only this often (or at once when this shepherd publishes): another shepherd's event waits at most this long. */
export const IDLE_LOOK_MS = 10_000;
/** The deadline of every send: a channel that does not answer by then failed. */
export const SEND_DEADLINE_MS = 10_000;

export interface Channel {
  id: string;
  type: ChannelType;
  wants(kind: HerdEventKind): boolean;
  /** Sends one notice; throws when it did not go out (then it is tried again). */
  send(notice: Notice): Promise<void>;
}

export interface NotifierOptions {
  outbox: Outbox;
  channels: readonly Channel[];
  lock: SenderLock;
  now?: () => number;
  /** The panel's page when it runs (never with its token). */
  link?: () => string | undefined;
  /** A channel that fails, told once until it sends again. */
  onError?: (message: string) => void;
}

export function backoff(tries: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, tries - 1));
}

/** Whose a notice is: one sheep, or one host. */
function source(e: HerdEvent): string {
  return e.agentId ? `a:${e.agentId}` : `h:${e.host}`;
}

export class Notifier {
  private readonly now: () => number;
  private readonly sentAt = new Map<string, number[]>();
  private readonly failing = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Nothing was pending at the last look: the next is not before this. */
  private idleUntil = 0;

  constructor(private readonly o: NotifierOptions) {
    this.now = o.now ?? Date.now;
  }

  get channels(): readonly Channel[] {
    return this.o.channels;
  }

  /** The core's sink: written through to the outbox at once; never throws. */
  publish(event: HerdEvent): void {
    const want = this.o.channels.filter((c) => c.wants(event.kind)).map((c) => c.id);
    try {
      if (this.o.outbox.add(event, want)) this.idleUntil = 0;
    } catch (e) {
      this.o.onError?.(`pi-shepherd notify: could not write the outbox (${(e as Error).message})`);
    }
  }

  /** Looks at the outbox every TICK_MS until stop; what an earlier shepherd left goes out too. */
  start(): void {
    if (this.timer || this.o.channels.length === 0) return;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.o.lock.release();
  }

  /** One pass: expired entries dropped, then what is due sent to each channel. Passes never overlap. */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    const now = this.now();
    if (now < this.idleUntil) return;
    if (!(await this.o.lock.take())) return;
    const known = new Set(this.o.channels.map((c) => c.id));
    const live: OutboxEntry[] = [];
    for (const entry of this.o.outbox.all()) {
      if (now - entry.event.at >= EXPIRY_MS) {
        this.o.outbox.remove(entry.id);
        continue;
      }
      // A channel no longer in the setting takes nothing more.
      let changed = false;
      for (const id of Object.keys(entry.channels)) {
        if (!known.has(id) && entry.channels[id]!.sent === undefined) {
          entry.channels[id]!.sent = now;
          changed = true;
        }
      }
      const done = Object.values(entry.channels).every((c) => c.sent !== undefined);
      // Sent everywhere: the text goes, the entry stays to refuse its key until it expires.
      if (done && entry.event.text !== "") {
        entry.event = { ...entry.event, text: "" };
        changed = true;
      }
      if (changed) this.o.outbox.save(entry);
      if (!done) live.push(entry);
    }
    // A quiet outbox is not read every second (its sent entries stay a day to refuse their keys).
    this.idleUntil = live.length === 0 ? now + IDLE_LOOK_MS : 0;
    for (const ch of this.o.channels) await this.sendTo(ch, live, now);
  }

  private recent(ch: string, now: number): number[] {
    const times = (this.sentAt.get(ch) ?? []).filter((t) => t > now - RATE_WINDOW_MS);
    this.sentAt.set(ch, times);
    return times;
  }

  private async sendTo(ch: Channel, entries: OutboxEntry[], now: number): Promise<void> {
    const pending = entries.filter((e) => e.channels[ch.id] && e.channels[ch.id]!.sent === undefined);
    // A notice tried before goes again as it was (its id, its events); new events group by their sheep.
    const groups = new Map<string, OutboxEntry[]>();
    for (const e of pending) {
      const notice = e.channels[ch.id]!.notice;
      const key = notice ? `n:${notice}` : source(e.event);
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    const due = [...groups.entries()]
      .filter(
        ([key, g]) => g.every((e) => e.channels[ch.id]!.next <= now) && (key.startsWith("n:") || now >= Math.min(...g.map((e) => e.event.at)) + COALESCE_MS),
      )
      .sort(([, a], [, b]) => a[0]!.event.at - b[0]!.event.at);
    const allowed = RATE_NOTICES - this.recent(ch.id, now).length;
    if (due.length === 0 || allowed <= 0) return;
    const sendable = due.slice(0, allowed);
    const rest = due.slice(allowed).filter(([key]) => !key.startsWith("n:"));
    for (const [i, [key, group]] of sendable.entries()) {
      let id = key.startsWith("n:") ? key.slice(2) : undefined;
      if (!id) {
        id = createHash("sha256")
          .update(`${ch.id}\0${group.map((e) => e.id).join(",")}\0${now}`)
          .digest("hex")
          .slice(0, 24);
        const counted = i === sendable.length - 1 ? rest.flatMap(([, g]) => g) : [];
        for (const e of group) e.channels[ch.id]!.notice = id;
        for (const e of counted) Object.assign(e.channels[ch.id]!, { notice: id, counted: true });
        // Written before it is sent: a retry after a crash is the same notice, with the same id.
        for (const e of [...group, ...counted]) this.o.outbox.save(e);
        group.push(...counted);
      }
      await this.sendOne(ch, id, group, now);
    }
  }

  private async sendOne(ch: Channel, id: string, group: OutboxEntry[], now: number): Promise<void> {
    const listed = group.filter((e) => !e.channels[ch.id]!.counted).map((e) => e.event);
    const counted = group.filter((e) => e.channels[ch.id]!.counted);
    const held: Held = { events: counted.length, sources: new Set(counted.map((e) => source(e.event))).size };
    const link = this.o.link?.();
    const notice = buildNotice(id, listed.length > 0 ? listed : [counted[0]!.event], { ...(link ? { link } : {}), ...(held.events > 0 ? { held } : {}) });
    this.recent(ch.id, now).push(now);
    try {
      await ch.send(notice);
    } catch (e) {
      for (const entry of group) {
        const st = entry.channels[ch.id]!;
        st.tries += 1;
        st.next = now + backoff(st.tries);
        this.o.outbox.save(entry);
      }
      if (!this.failing.has(ch.id)) {
        this.failing.add(ch.id);
        this.o.onError?.(
          `pi-shepherd notify: the ${ch.type} channel failed (${(e as Error).message}); tried again with backoff for up to ${EXPIRY_MS / 3_600_000} h`,
        );
      }
      return;
    }
    this.failing.delete(ch.id);
    for (const entry of group) {
      entry.channels[ch.id]!.sent = now;
      if (Object.values(entry.channels).every((c) => c.sent !== undefined)) entry.event = { ...entry.event, text: "" };
      this.o.outbox.save(entry);
    }
  }
}
