/**
 * What the event stream says, driven by the core: each write of the records (Shepherd.onRecords)
 * and each bell of a sheep's files (Shepherd.onChange, after which that sheep's files are read)
 * compares every sheep's view with the one sent last and sends what changed. Nothing polls the
 * HTTP side; while a stream is open every sheep's files are read every READ_ALL_MS as well, for a
 * watch event the file system missed. The counters of /metrics are kept here too, as results
 * settle and pushes go out.
 */
import type { Shepherd } from "../core/shepherd.ts";
import { countOf, MAX_COST } from "../domain/sheep-data.ts";
import type { WaitItem } from "../ports/types.ts";
import type { SseHub } from "./sse.ts";
import { type MailCount, panelHerd, type PanelSheep } from "./views.ts";
import type { HerdFilter } from "./history.ts";

export const READ_ALL_MS = 5000;
/**
 * The most of a result's or a message's text one event carries: the ring holds 1024 events, and a
 * result may be megabytes. The whole text is the conversation's and the messages route's.
 */
export const MAX_EVENT_TEXT = 16 * 1024;

/** A text as an event carries it: cut at MAX_EVENT_TEXT, and said so. */
function eventText(text: string): { text: string; truncated?: true } {
  return text.length > MAX_EVENT_TEXT ? { text: text.slice(0, MAX_EVENT_TEXT), truncated: true } : { text };
}
/** Buckets of the prompt duration histogram, in seconds. */
export const DURATION_BUCKETS = [1, 5, 15, 60, 300, 900, 3600] as const;

export interface FeedCounters {
  /** Settled prompts counted, with their durations. */
  durations: { buckets: number[]; sum: number; count: number };
  tokens: { input: number; output: number };
  cost: number;
  pushes: number;
}

export class PanelFeed {
  readonly mail = new Map<string, MailCount>();
  readonly counters: FeedCounters = {
    durations: { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 },
    tokens: { input: 0, output: 0 },
    cost: 0,
    pushes: 0,
  };
  private readonly sent = new Map<string, { json: string; state: string; label: string }>();
  private readonly settled = new Set<string>();
  private readonly pushed = new Set<string>();
  private readonly dirty = new Set<string>();
  private stops: (() => void)[] = [];
  private scanQueued = false;
  private reading: Promise<void> | undefined;
  private readAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly shepherd: Shepherd,
    private readonly hub: SseHub,
  ) {}

  /** Takes the records as they are now as already told, then follows every change. */
  async start(): Promise<void> {
    const reg = this.shepherd.registry;
    for (const p of reg.prompts.values()) {
      if (p.settled) this.countSettled(p.promptId, p.settled);
      if (p.delivered?.by === "push") this.pushed.add(p.promptId);
    }
    for (const d of reg.delegations.values()) if (d.delivered) this.pushed.add(d.delegationId);
    this.counters.pushes = this.pushed.size;
    await Promise.all([...reg.agents.values()].filter((a) => a.state !== "closed").map((a) => this.readMail(a.agentId, false)));
    for (const v of panelHerd(this.shepherd, this.mail).sheep) this.remember(v);
    this.stops.push(this.shepherd.onRecords(() => this.scanSoon()));
    this.stops.push(
      this.shepherd.onChange((agentId) => {
        if (agentId === undefined) return this.scanSoon();
        this.dirty.add(agentId);
        this.readSoon();
      }),
    );
    this.timer = setInterval(() => {
      if (this.hub.size === 0) return;
      for (const a of reg.agents.values()) if (a.state !== "closed") this.dirty.add(a.agentId);
      this.readSoon();
    }, READ_ALL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.stops) s();
    this.stops = [];
    clearInterval(this.timer);
  }

  /** The fleet now, as GET /api/v1/sheep gives it (the sheep not closed, unless the filter says otherwise). */
  herd(filter?: HerdFilter): ReturnType<typeof panelHerd> {
    return panelHerd(this.shepherd, this.mail, filter);
  }

  /** Several writes in one turn of the event loop are one comparison. */
  private scanSoon(): void {
    if (this.scanQueued || this.stopped) return;
    this.scanQueued = true;
    setImmediate(() => {
      this.scanQueued = false;
      if (!this.stopped) this.scan();
    });
  }

  /** The files of the sheep whose bells rang, one read at a time (what rings meanwhile is read next). */
  private readSoon(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        const which = new Set(this.dirty);
        this.dirty.clear();
        if (which.size === 0) continue;
        await this.shepherd.refreshFromFiles(which).catch(() => undefined);
        await Promise.all([...which].map((id) => this.readMail(id, true)));
        if (!this.stopped) this.scan();
      } while (this.readAgain && !this.stopped);
    })().finally(() => {
      this.reading = undefined;
    });
  }

  /** A sheep's message log, counted; new messages since the last read are sent. */
  private async readMail(agentId: string, tell: boolean): Promise<void> {
    const rec = this.shepherd.registry.agents.get(agentId);
    if (!rec || rec.state === "closed") {
      this.mail.delete(agentId);
      return;
    }
    const listed = await this.shepherd.messageLog(rec.agentId).catch(() => undefined);
    if (!listed) return;
    const before = this.mail.get(agentId)?.count;
    const questions = listed.filter((m) => m.kind === "question" && m.awaitReply && m.answer === undefined).length;
    this.mail.set(agentId, { count: listed.length, questions });
    if (!tell || before === undefined) return;
    for (const m of listed.slice(before)) {
      this.hub.send("message", { agentId, message: { messageId: m.messageId, kind: m.kind, ...eventText(m.text), at: m.at } });
    }
  }

  /** Compares the records with what was told and tells the difference. */
  private scan(): void {
    const reg = this.shepherd.registry;
    const { sheep } = panelHerd(this.shepherd, this.mail);
    const live = new Set<string>();
    for (const v of sheep) {
      live.add(v.agentId);
      const before = this.sent.get(v.agentId);
      const json = JSON.stringify(v);
      if (before?.json === json) continue;
      if (before === undefined && !this.mail.has(v.agentId)) void this.readMail(v.agentId, false);
      this.hub.send("sheep", v);
      if (v.state !== before?.state) {
        if (v.state === "blocked") this.hub.send("blocked", { agentId: v.agentId, label: v.label });
        if (v.state === "exited") this.hub.send("exited", { agentId: v.agentId });
      }
      this.remember(v, json);
    }
    for (const id of [...this.sent.keys()]) {
      if (live.has(id)) continue;
      this.sent.delete(id);
      this.mail.delete(id);
      this.hub.send("closed", { agentId: id });
    }
    const kept = new Set<string>();
    for (const p of reg.prompts.values()) {
      kept.add(p.promptId);
      if (p.settled && !this.settled.has(p.promptId)) {
        this.countSettled(p.promptId, p.settled);
        this.hub.send("result", { agentId: p.agentId, promptId: p.promptId, status: p.settled.status, ...eventText(p.settled.text ?? p.settled.error ?? "") });
      }
      if (p.delivered?.by === "push" && !this.pushed.has(p.promptId)) {
        this.pushed.add(p.promptId);
        this.counters.pushes++;
      }
    }
    for (const d of reg.delegations.values()) {
      kept.add(d.delegationId);
      if (d.delivered && !this.pushed.has(d.delegationId)) {
        this.pushed.add(d.delegationId);
        this.counters.pushes++;
      }
    }
    // Bounded as the records are: an id the core let go of is let go here too.
    for (const id of this.settled) if (!kept.has(id)) this.settled.delete(id);
    for (const id of this.pushed) if (!kept.has(id)) this.pushed.delete(id);
  }

  private remember(v: PanelSheep, json = JSON.stringify(v)): void {
    this.sent.set(v.agentId, { json, state: v.state, label: v.label });
  }

  private countSettled(promptId: string, s: WaitItem): void {
    this.settled.add(promptId);
    const c = this.counters;
    if (s.usage) {
      c.tokens.input += countOf(s.usage.input) ?? 0;
      c.tokens.output += countOf(s.usage.output) ?? 0;
      c.cost += countOf(s.usage.cost, MAX_COST) ?? 0;
    }
    const ms = countOf(s.durationMs);
    if (ms !== undefined) {
      const sec = ms / 1000;
      c.durations.count++;
      c.durations.sum += sec;
      DURATION_BUCKETS.forEach((b, i) => {
        if (sec <= b) c.durations.buckets[i]!++;
      });
    }
  }
}
