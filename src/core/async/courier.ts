/**
 * The courier brings the shepherd's conversation what nobody waits for, each thing exactly once:
 * results of prompts sent with notify, questions of sheep, and background delegations once their
 * last task is final. Its mark is written through before a push goes out, so neither a reload nor
 * a crash pushes anything twice; what a wait returned is the conversation's already and is not
 * pushed. Progress and done messages are told to the person instead.
 *
 * A sheep is driven by a model that may have read hostile text, and may flood: what one look
 * finds of a sheep goes out as one push (its questions) and one notice (its progress and done),
 * and each sheep gets at most PUSHES_PER_WINDOW pushes and as many notices in any WINDOW_MS.
 * What is held back waits, unhandled, for the window to open (it is still listed by `messages`),
 * and is told in one line meanwhile.
 *
 * A person's prompt (sent from /shepherd, the panel or the API, without notify) is the person's:
 * its questions go to the person, not into the conversation, and its finish is told to the
 * person when nobody waits for it; the answer stays unseen for their next wait.
 */
import { close } from "../lifecycle/close.ts";
import { owesDelivery, type Herd } from "../herd/herd.ts";
import type { DelegateItem } from "../delegation/delegate.ts";
import { type DelegateMode, type DelegationRecord, personEdge, type PromptRecord, type SheepMessage, type WaitItem } from "../../ports/types.ts";
import { look, RECHECK_TICKS, stillAlive } from "../prompts/wait.ts";
import { bounded } from "../herd/bounded.ts";

/** How long stopping waits for a sweep under way (a look at a silent machine ends at its call's own deadline). */
const STOP_WAIT_MS = 2_000;

/** One task of a pushed background delegation: as a delegate result, with its prompt. */
export interface PushedItem extends DelegateItem {
  promptId?: string;
}

export type Push =
  | { kind: "result"; item: WaitItem; label: string; agent: string }
  | {
      kind: "question";
      agentId: string;
      label: string;
      agent: string;
      /** The first of them (what a push of one question always carried). */
      message: SheepMessage;
      /** The sheep's new questions, in the order asked, the first included (at most MAX_QUESTIONS_PER_PUSH); without it, `message` alone. */
      messages?: SheepMessage[];
      /** Questions of this sheep seen and not in this push: they come in a later one. */
      more?: number;
    }
  | { kind: "delegation"; delegationId: string; mode: DelegateMode; items: PushedItem[] };

/** A question push, as the conversation or the person gets it. */
export type QuestionPush = Extract<Push, { kind: "question" }>;

/** What the courier tells the person rather than the model. */
export type PersonNote =
  /** A person's prompt finished while nobody waited: its answer waits, unseen, for their next wait. */
  | { kind: "answered"; agentId: string; label: string; promptId: string; status: WaitItem["status"] }
  /** Questions of a sheep working on a person's prompt. */
  | QuestionPush;

export interface Notice {
  agentId: string;
  label: string;
  /** The latest progress or done message. */
  message: SheepMessage;
  /** Progress and done messages before it that are told only by this count. */
  more?: number;
}

/** Messages of a sheep that the rate limit holds back for now. */
export interface Held {
  agentId: string;
  label: string;
  count: number;
}

export interface CourierSink {
  /** Hands one push to the conversation; throws when it could not, and it is tried again later. */
  deliver(push: Push): void;
  /** Progress and done messages of a sheep, for the person. */
  notice?(notice: Notice): void;
  /** Messages of a sheep held back by the rate limit, for the person: one line. */
  held?(held: Held): void;
  /**
   * What is the person's, for the person (transcript, panel): throws when it could not, and it is
   * tried again later. Without it a person's prompt's questions go to the conversation.
   */
  person?(note: PersonNote): void;
}

/** A prompt a person sent without notify: its questions and its finish are the person's. */
function persons(p: PromptRecord | undefined): boolean {
  return p !== undefined && personEdge(p.edge) && !p.notify && !p.delegationId;
}

/** The window of the rate limit, and what each sheep gets in it: pushes of questions, and notices. */
export const WINDOW_MS = 60_000;
export const PUSHES_PER_WINDOW = 3;
/** The most questions one push lists; more wait for the next. */
export const MAX_QUESTIONS_PER_PUSH = 50;

/** Times of the last sends per sheep, for a sliding window. */
class Budget {
  private readonly sent = new Map<string, number[]>();
  private recent(agentId: string, now: number): number[] {
    const times = (this.sent.get(agentId) ?? []).filter((t) => t > now - WINDOW_MS);
    this.sent.set(agentId, times);
    return times;
  }
  allows(agentId: string, now: number): boolean {
    return this.recent(agentId, now).length < PUSHES_PER_WINDOW;
  }
  /** When the next send is allowed. */
  opens(agentId: string, now: number): number {
    const times = this.recent(agentId, now);
    return times.length < PUSHES_PER_WINDOW ? now : times[0]! + WINDOW_MS;
  }
  spend(agentId: string, now: number): void {
    this.recent(agentId, now).push(now);
  }
}

/** How long the courier sleeps when nothing it carries can change without a file or a call telling it. */
const IDLE_SLEEP_MS = 60_000;

export class Courier {
  private sink: CourierSink | undefined;
  private dirty = true;
  /** A push the conversation did not take: try again after an interval, not after an idle sleep. */
  private refused = false;
  private wake: AbortController | undefined;
  /** Woken by its timer, not by a bell: no file changed since the last sweep. */
  private quiet = false;
  private quietSweeps = 0;
  private loop: Promise<void> | undefined;
  private readonly stopHearing: () => void;
  /** Background delegations whose runner still runs here: only the runner knows what comes next. */
  readonly runners = new Map<string, Promise<void>>();
  /** The latest progress message of each sheep, for the widget. */
  readonly lastProgress = new Map<string, SheepMessage>();
  private readonly pushes = new Budget();
  private readonly notices = new Budget();
  /** Progress and done messages handled while the notice budget was spent: told in the next notice. */
  private readonly untold = new Map<string, { message: SheepMessage; count: number }>();
  /** Sheep whose held-back messages were told: once, until a push of theirs goes out. */
  private readonly heldTold = new Set<string>();
  /** The earliest time something held back may go out: the courier looks again then. */
  private holdUntil: number | undefined;

  constructor(private readonly herd: Herd) {
    this.stopHearing = herd.bells.overhear(() => this.kick());
  }

  /** Starts delivering; what waited for a conversation meanwhile goes out first. */
  attach(sink: CourierSink): void {
    this.sink = sink;
    this.kick();
    this.loop ??= this.run();
  }

  /** Something may have changed: look again soon. */
  kick(): void {
    this.dirty = true;
    this.wake?.abort();
  }

  /** No more pushes; resolves once a push under way has gone out (or not started). */
  async stop(): Promise<void> {
    this.stopHearing();
    this.sink = undefined;
    this.wake?.abort();
    // A look at a machine that does not answer ends at its call's deadline; a quit does not wait for it.
    if (this.loop) await bounded(this.loop, this.herd.clock, this.herd.clock.now() + STOP_WAIT_MS);
  }

  /** Whether a result of this prompt is owed to the conversation and not yet given. */
  undelivered(p: PromptRecord): boolean {
    return owesDelivery(this.herd, p);
  }

  private async run(): Promise<void> {
    const { herd } = this;
    while (this.sink && !herd.disposed) {
      if (this.dirty) {
        this.dirty = false;
        this.refused = false;
        // Every fifth quiet sweep reads the files all the same: for a watch event the file
        // system missed, and for the pid witness.
        const quiet = this.quiet && ++this.quietSweeps % RECHECK_TICKS !== 0;
        this.quiet = false;
        try {
          await this.sweep(quiet);
        } catch {
          // a file that could not be read now is read at the next look
        }
        continue;
      }
      this.wake = new AbortController();
      // While results are owed, the sheep's liveness is asked about once an interval: a pane that
      // went away rings no file bell.
      let ms = this.refused || this.watched().length > 0 ? herd.opts.livenessIntervalMs : IDLE_SLEEP_MS;
      const hold = this.holdUntil;
      if (hold !== undefined) ms = Math.max(0, Math.min(ms, hold - herd.clock.now()));
      try {
        await herd.clock.sleep(ms, this.wake.signal);
        this.dirty = true;
        // What was held back is due: the messages are read again, not only the panes asked about.
        this.quiet = hold === undefined || herd.clock.now() < hold;
      } catch {
        // kicked
      }
    }
    this.loop = undefined;
  }

  /** Prompts whose result the courier owes and that are not settled yet. */
  private watched(): PromptRecord[] {
    return [...this.herd.registry.prompts.values()].filter((p) => {
      if (p.settled) return false;
      if (p.notify && !p.delivered) return true;
      if (persons(p) && this.sink?.person) return true;
      if (!p.delegationId || this.runners.has(p.delegationId)) return false;
      return owesDelivery(this.herd, p);
    });
  }

  /**
   * Looks at what is owed and pushes what is due. A quiet sweep (no bell since the last) reads
   * no file: the sheep's files ring their bells when they change, so only a pane that went can
   * be news, and the one batched liveness answer tells.
   */
  private async sweep(quiet: boolean): Promise<void> {
    const { herd } = this;
    const reg = herd.registry;
    if (!quiet) this.holdUntil = undefined;
    // Each sheep is looked at on its own: one on a machine that does not answer holds up no other's push.
    await Promise.all(
      this.watched().map(async (p) => {
        if (!this.sink) return;
        const rec = reg.agents.get(p.agentId);
        if (quiet && (await stillAlive(herd, rec))) return;
        await look(herd, p, rec).catch(() => undefined);
      }),
    );
    if (!this.sink) return;
    const unread = quiet ? [] : [...reg.agents.values()].filter((rec) => rec.state !== "closed");
    const read = await Promise.all(unread.map((rec) => herd.opts.host.messages(rec.agentId).catch(() => undefined)));
    for (const [i, rec] of unread.entries()) {
      if (!this.sink) return;
      await this.readMessages(rec.agentId, read[i]);
    }
    for (const p of [...reg.prompts.values()]) {
      if (!this.sink) return;
      if (p.notify && p.settled && !p.delivered && !herd.waiting.has(p.promptId)) await this.pushResult(p);
      else if (persons(p) && p.settled && !p.shown && !p.announced && !herd.waiting.has(p.promptId)) await this.announce(p);
    }
    for (const d of [...reg.delegations.values()]) {
      if (!this.sink) return;
      if (!d.delivered && d.done && !this.runners.has(d.delegationId) && d.items.every((i) => i.status !== undefined)) await this.pushDelegation(d);
    }
  }

  /**
   * One look at a sheep's new messages: its questions go out in one push, its progress and done
   * messages in one notice, each within the sheep's budget. What the budget holds back stays
   * unhandled (questions, and what came after the first of them) or untold (notices) until the
   * window opens.
   */
  private async readMessages(agentId: string, read?: SheepMessage[]): Promise<void> {
    const { herd } = this;
    const rec = herd.registry.agents.get(agentId);
    if (!rec) return;
    // A log that cannot be read now changes nothing: read as empty, it would lower the count and
    // push every message past it again once it can be read.
    const messages = read ?? (await herd.opts.host.messages(agentId).catch(() => undefined));
    if (!messages) return;
    const from = Math.min(rec.messagesHandled ?? 0, messages.length);
    let end = from;
    const questions: number[] = [];
    // One push goes to one place: the person's questions (of a prompt they sent) or the model's.
    const toPerson = (m: SheepMessage) => this.sink?.person !== undefined && persons(herd.registry.prompts.get(m.promptId ?? rec.activePromptId ?? ""));
    let forPerson: boolean | undefined;
    for (; end < messages.length; end++) {
      const m = messages[end]!;
      if (m.kind !== "question" || herd.claimedQuestions.has(m.messageId)) continue;
      // A wait on this sheep returns the question itself (as blocked), answer included in its turn.
      if (m.awaitReply && herd.waiting.has(agentId)) break;
      const whose = toPerson(m);
      if (forPerson !== undefined && whose !== forPerson) break;
      forPerson = whose;
      questions.push(end);
    }
    const now = herd.clock.now();
    let upTo = end;
    let pushed = false;
    if (questions.length > 0) {
      if (this.pushes.allows(agentId, now)) {
        const listed = questions.slice(0, MAX_QUESTIONS_PER_PUSH);
        // The rest go in the next push, at once if the budget allows: no file need ring for them.
        if (questions.length > listed.length) {
          upTo = questions[listed.length]!;
          this.hold(now);
        }
        const more = questions.length - listed.length;
        const push: Push = {
          kind: "question",
          agentId,
          label: rec.label,
          agent: rec.agent,
          message: messages[listed[0]!]!,
          messages: listed.map((i) => messages[i]!),
          ...(more > 0 ? { more } : {}),
        };
        const before = rec.messagesHandled;
        pushed = await this.deliver(
          forPerson ? { person: push } : push,
          () => (rec.messagesHandled = upTo),
          () => {
            if (before === undefined) delete rec.messagesHandled;
            else rec.messagesHandled = before;
          },
        );
        if (pushed) {
          this.pushes.spend(agentId, now);
          this.heldTold.delete(agentId);
        } else upTo = questions[0]!;
      } else {
        upTo = questions[0]!;
        this.hold(this.pushes.opens(agentId, now));
        if (!this.heldTold.has(agentId)) {
          this.heldTold.add(agentId);
          this.sink?.held?.({ agentId, label: rec.label, count: messages.length - upTo });
        }
      }
    }
    this.tell(agentId, rec.label, messages.slice(from, upTo), now);
    if (!pushed && upTo > (rec.messagesHandled ?? 0)) {
      rec.messagesHandled = upTo;
      await herd.persist();
    }
  }

  private hold(until: number): void {
    this.holdUntil = this.holdUntil === undefined ? until : Math.min(this.holdUntil, until);
  }

  /** Progress and done messages of one look (and any untold before them) as one notice, within the budget. */
  private tell(agentId: string, label: string, handled: SheepMessage[], now: number): void {
    const notes = handled.filter((m) => m.kind !== "question");
    for (const m of notes) if (m.kind === "progress") this.lastProgress.set(agentId, m);
    const before = this.untold.get(agentId);
    const latest = notes.at(-1) ?? before?.message;
    if (!latest) return;
    const count = notes.length + (before?.count ?? 0);
    if (!this.notices.allows(agentId, now)) {
      this.untold.set(agentId, { message: latest, count });
      this.hold(this.notices.opens(agentId, now));
      return;
    }
    this.untold.delete(agentId);
    this.notices.spend(agentId, now);
    this.sink?.notice?.({ agentId, label, message: latest, ...(count > 1 ? { more: count - 1 } : {}) });
  }

  /** A person's prompt finished and nobody waits: the person is told once; the answer stays unseen. */
  private async announce(p: PromptRecord): Promise<void> {
    const rec = this.herd.registry.agents.get(p.agentId);
    const note: PersonNote = { kind: "answered", agentId: p.agentId, label: rec?.label ?? p.agentId, promptId: p.promptId, status: p.settled!.status };
    await this.deliver(
      { person: note },
      () => (p.announced = true),
      () => delete p.announced,
    );
  }

  private async pushResult(p: PromptRecord): Promise<void> {
    const rec = this.herd.registry.agents.get(p.agentId);
    await this.deliver(
      { kind: "result", item: p.settled!, label: rec?.label ?? p.agentId, agent: rec?.agent ?? "" },
      () => (p.delivered = { by: "push", at: new Date(this.herd.clock.now()).toISOString() }),
      () => delete p.delivered,
    );
  }

  private async pushDelegation(d: DelegationRecord): Promise<void> {
    const { herd } = this;
    // Closed as a delegation closes its sheep, also after a reload cut the runner short.
    if (!d.keepOpen) {
      for (const i of d.items) {
        const rec = i.agentId ? herd.registry.agents.get(i.agentId) : undefined;
        if (rec && rec.state !== "closed") await close(herd, rec.agentId).catch(() => undefined);
      }
    }
    const items: PushedItem[] = d.items.map((i) => ({
      agent: i.agent,
      task: i.task,
      status: i.status!,
      ...(i.text !== undefined ? { text: i.text } : {}),
      ...(i.error !== undefined ? { error: i.error } : {}),
      ...(i.agentId !== undefined ? { agentId: i.agentId } : {}),
      ...(i.promptId !== undefined ? { promptId: i.promptId } : {}),
      ...(i.usage !== undefined ? { usage: i.usage } : {}),
      ...(i.step !== undefined ? { step: i.step } : {}),
    }));
    const pushed = await this.deliver(
      { kind: "delegation", delegationId: d.delegationId, mode: d.mode, items },
      () => (d.delivered = { at: new Date(herd.clock.now()).toISOString() }),
      () => delete d.delivered,
    );
    if (pushed) {
      // The texts went out; the record only answers for the id from now on.
      for (const i of d.items) delete i.text;
      await herd.persist();
    }
  }

  /** Marks, writes the mark through, then pushes (to the person, where it is theirs); a push that fails is unmarked for a later try. */
  private async deliver(push: Push | { person: PersonNote }, mark: () => void, unmark: () => void): Promise<boolean> {
    const sink = this.sink;
    if (!sink || ("person" in push && !sink.person)) return false;
    mark();
    await this.herd.persist();
    try {
      if ("person" in push) sink.person!(push.person);
      else sink.deliver(push);
      return true;
    } catch {
      unmark();
      this.refused = true;
      await this.herd.persist();
      return false;
    }
  }
}
