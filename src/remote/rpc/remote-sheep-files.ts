/**
 * The sheep-files port over a remote host's agent: the sheep's files stay there, read and written
 * by the agent's LocalSheepFiles; changes come back as events on the same connection, never as a
 * poll per sheep.
 */
import type { Delivery, PreparedSheep, PrepareRequest, ReplyOutcome, SheepFiles, SheepResult, SheepSnapshot } from "../../ports/sheep-files.ts";
import type { Conversation, EgressReport, ResumeCard, SheepMessage } from "../../ports/types.ts";
import { egressReportOf } from "../../ports/egress-report.ts";
import { isWellFormedId } from "../../domain/ids.ts";
import { MAX_ERROR_CHARS, MAX_MESSAGE_CHARS, stringOf, timeOf } from "../../domain/sheep-data.ts";
import { sheepResultOf } from "../../ports/sheep-result.ts";
import type { RemoteCall } from "./call.ts";
import { CallLost, LOST_CALL_WAIT_MS, whileAway } from "./lost-call.ts";
import { isObject, isString } from "./shape.ts";
import { ask } from "./wire/method.ts";
import { FILES_WIRE as W } from "./wire/sheep-files.ts";

/** A conversation line's text at most: a local read cuts answers at 16,000 characters and says so in a few more. */
const MAX_LINE_CHARS = 16_100;

export class RemoteSheepFiles implements SheepFiles {
  private readonly listeners = new Map<string, Set<() => void>>();

  constructor(
    private readonly remote: RemoteCall,
    private readonly host: string,
    /** How long a delivery lost on its way waits for the host to come back to be sent again. */
    private readonly lostCallWaitMs = LOST_CALL_WAIT_MS,
  ) {
    remote.onEvent((e) => {
      if (e.ev === "change") this.fire(e.agentId);
    });
    // A new agent process watches nothing yet: subscribe again, and have every waiter look,
    // for what changed while the link was down was told to nobody.
    remote.onReconnect(() => {
      for (const id of this.listeners.keys()) this.remote.call(W.subscribe.name, [id]).catch(() => undefined);
      for (const id of [...this.listeners.keys()]) this.fire(id);
    });
  }

  private fire(agentId: string): void {
    for (const cb of [...(this.listeners.get(agentId) ?? [])]) cb();
  }

  prepare(req: PrepareRequest): Promise<PreparedSheep> {
    return ask(this.remote, this.host, W.prepare, req);
  }

  async snapshot(agentId: string): Promise<SheepSnapshot> {
    const s = await ask<SheepSnapshot, [string]>(this.remote, this.host, W.snapshot, agentId);
    // Times and texts as a status file read here gives them.
    if (s.ready) s.ready.readyAt = timeOf(s.ready.readyAt) ?? new Date().toISOString();
    if (s.exited) s.exited.at = timeOf(s.exited.at) ?? new Date().toISOString();
    if (s.blocked !== undefined) s.blocked = stringOf(s.blocked, MAX_MESSAGE_CHARS)!;
    if (s.asking) s.asking.text = stringOf(s.asking.text, MAX_MESSAGE_CHARS)!;
    return s;
  }

  /** Not forwarded: a system call on another machine is a round trip; liveness is the multiplexer's then. */
  running(_agentId: string): boolean | undefined {
    return undefined;
  }

  /**
   * The host's answer gets the bounds of a result file read here: its fields checked, its text no
   * longer than a result file may be (else refused as one would be), whatever the host sent.
   */
  async result(agentId: string, promptId: string): Promise<SheepResult | undefined> {
    const r = await ask<(SheepResult & Record<string, unknown>) | undefined, [string, string]>(this.remote, this.host, W.result, agentId, promptId);
    if (r === undefined) return undefined;
    const refused = r.refused;
    if (isObject(refused) && (refused.code === "result_too_large" || refused.code === "result_unreadable") && isString(refused.reason)) {
      return { promptId, status: "failed", text: "", refused: { code: refused.code, reason: stringOf(refused.reason, MAX_ERROR_CHARS)! } };
    }
    return sheepResultOf(r, promptId);
  }

  /**
   * A delivery whose connection went while it was on its way may have reached the sheep or not.
   * The sheep takes each delivery once by its id (a second copy is dropped there), so it is sent
   * again when the host is back, within lostCallWaitMs; after that the caller is told it may
   * have arrived, never that nothing was done.
   */
  async submit(agentId: string, delivery: Delivery): Promise<void> {
    try {
      await this.remote.call(W.submit.name, [agentId, delivery]);
      return;
    } catch (e) {
      if (!(e instanceof CallLost)) throw e;
    }
    const sent = await whileAway(this.remote, this.lostCallWaitMs, () => this.remote.call(W.submit.name, [agentId, delivery]));
    if (!sent) {
      throw new CallLost(
        `host "${this.host}" went away while a ${delivery.kind} for ${agentId} was on its way, and did not take it again within ${Math.round(this.lostCallWaitMs / 1000)} s: it may have reached the sheep (it takes each one once). Once the host is back, action status shows whether the sheep works on it.`,
      );
    }
  }

  /** Checked as a message log read here is: a message with no time is none, its text bounded. */
  async messages(agentId: string): Promise<SheepMessage[]> {
    const list = await ask<SheepMessage[], [string]>(this.remote, this.host, W.messages, agentId);
    const out: SheepMessage[] = [];
    for (const m of list) {
      const at = timeOf(m.at);
      if (at === undefined || m.text.length > MAX_MESSAGE_CHARS || !isWellFormedId(m.messageId, "message")) continue;
      out.push({ ...m, at });
    }
    return out;
  }

  async replies(agentId: string): Promise<Map<string, "replied" | "expired">> {
    return new Map(await ask<[string, "replied" | "expired"][], [string]>(this.remote, this.host, W.replies, agentId));
  }

  replyText(agentId: string, messageId: string): Promise<string | undefined> {
    return ask(this.remote, this.host, W.replyText, agentId, messageId);
  }

  reply(agentId: string, messageId: string, text: string): Promise<ReplyOutcome> {
    return ask(this.remote, this.host, W.reply, agentId, messageId, text);
  }

  subscribe(agentId: string, onChange: () => void): () => void {
    let set = this.listeners.get(agentId);
    if (!set) {
      set = new Set();
      this.listeners.set(agentId, set);
      // While the link is down this fails; the reconnect subscribes again.
      this.remote.call(W.subscribe.name, [agentId]).catch(() => undefined);
    }
    const mine = () => onChange();
    set.add(mine);
    return () => {
      const s = this.listeners.get(agentId);
      if (!s?.delete(mine) || s.size > 0) return;
      this.listeners.delete(agentId);
      this.remote.call(W.unsubscribe.name, [agentId]).catch(() => undefined);
    };
  }

  evidencePath(agentId: string, promptId: string): Promise<string> {
    return ask(this.remote, this.host, W.evidencePath, agentId, promptId);
  }

  cleanup(agentId: string): Promise<string | undefined> {
    return ask(this.remote, this.host, W.cleanup, agentId);
  }

  async relabel(agentId: string, label: string): Promise<void> {
    await this.remote.call(W.relabel.name, [agentId, label]);
  }

  /** The host's own list, checked and capped as its local scan caps it. */
  async staleSpecs(olderThanMs: number): Promise<{ agentId: string }[]> {
    const found = await ask<{ agentId: string }[], [number]>(this.remote, this.host, W.staleSpecs, olderThanMs);
    return found.slice(0, 200).map((s) => ({ agentId: s.agentId }));
  }

  async discard(agentId: string): Promise<void> {
    await this.remote.call(W.discard.name, [agentId]);
  }

  /** A sheep that came back runs on a new session file there; the card there names it. */
  renewed(agentId: string, sessionPath: string): Promise<string | undefined> {
    return ask(this.remote, this.host, W.renewed, agentId, sessionPath);
  }

  /** The warm pi's resident memory there, as that host reads it. */
  residentKb(agentId: string): Promise<number | undefined> {
    return ask(this.remote, this.host, W.residentKb, agentId);
  }

  resumeCard(agentId: string): Promise<ResumeCard | undefined> {
    return ask(this.remote, this.host, W.resumeCard, agentId);
  }

  resumeCards(): Promise<ResumeCard[]> {
    return ask(this.remote, this.host, W.resumeCards);
  }

  /** As the session tail is read here: at most the turns asked for, each line's text bounded. */
  async conversation(agentId: string, turns: number): Promise<Conversation> {
    const c = await ask<Conversation, [string, number]>(this.remote, this.host, W.conversation, agentId, turns);
    if (!c.turns) return c;
    const kept = c.turns.slice(-Math.max(1, turns)).map(({ at, ...t }) => {
      const when = timeOf(at);
      return { ...t, ...(when ? { at: when } : {}), lines: t.lines.map((l) => ({ ...l, text: stringOf(l.text, MAX_LINE_CHARS)! })) };
    });
    return { ...c, turns: kept, earlier: c.earlier || kept.length < c.turns.length };
  }

  /** The host's sheep wrote the log there: every field checked again here, at most the entries asked for. */
  async egress(agentId: string, entries: number): Promise<EgressReport | undefined> {
    const r = await ask<unknown, [string, number]>(this.remote, this.host, W.egress, agentId, entries);
    return r === undefined ? undefined : egressReportOf(r, entries);
  }
}
