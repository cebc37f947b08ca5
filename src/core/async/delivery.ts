/**
 * What the courier hands out, each thing exactly once: its mark is written through before a push
 * goes out, so neither a reload nor a crash pushes anything twice. A sheep's questions of one look
 * go out as one push, its progress and done as one notice, each within the sheep's budget; what is
 * held back waits, unhandled, for the window to open, and is told in one line meanwhile.
 */
import { close } from "../lifecycle/close.ts";
import type { Herd } from "../herd/herd.ts";
import { type AgentRecord, type DelegationRecord, personEdge, type PromptRecord, type SheepMessage } from "../../ports/types.ts";
import { Budget, MAX_QUESTIONS_PER_PUSH } from "./budget.ts";
import type { CourierSink, PersonNote, Push, PushedItem } from "./push.ts";

/** A prompt a person sent without notify: its questions and its finish are the person's. */
export function persons(p: PromptRecord | undefined): boolean {
  return p !== undefined && personEdge(p.edge) && !p.notify && !p.delegationId;
}

export class Delivery {
  /** Where pushes go; none while no conversation is attached. */
  sink: CourierSink | undefined;
  /** A push the conversation did not take: try again after an interval, not after an idle sleep. */
  refused = false;
  /** The earliest time something held back may go out: the courier looks again then. */
  holdUntil: number | undefined;
  /** The latest progress message of each sheep, for the widget. */
  readonly lastProgress = new Map<string, SheepMessage>();
  private readonly pushes = new Budget();
  private readonly notices = new Budget();
  /** Progress and done messages handled while the notice budget was spent: told in the next notice. */
  private readonly untold = new Map<string, { message: SheepMessage; count: number }>();
  /** Sheep whose held-back messages were told: once, until a push of theirs goes out. */
  private readonly heldTold = new Set<string>();

  constructor(private readonly herd: Herd) {}

  /**
   * One look at a sheep's new messages: its questions go out in one push, its progress and done
   * messages in one notice, each within the sheep's budget. What the budget holds back stays
   * unhandled (questions, and what came after the first of them) or untold (notices) until the
   * window opens.
   */
  async readMessages(agentId: string, read?: SheepMessage[]): Promise<void> {
    const { herd } = this;
    const rec = herd.registry.agents.get(agentId);
    if (!rec) return;
    // A log that cannot be read now changes nothing: read as empty, it would lower the count and
    // push every message past it again once it can be read.
    const messages = read ?? (await herd.opts.files.messages(agentId).catch(() => undefined));
    if (!messages) return;
    const from = Math.min(rec.messagesHandled ?? 0, messages.length);
    // Every question not handled yet is the person's news, whether the model or a wait takes it:
    // published by its message id, so a look that sees it again sends nothing twice.
    for (const m of messages.slice(from)) {
      if (m.kind !== "question" || herd.claimedQuestions.has(m.messageId)) continue;
      herd.publish(rec, {
        kind: "question",
        key: `question:${m.messageId}`,
        messageId: m.messageId,
        ...(m.promptId ? { promptId: m.promptId } : {}),
        text: m.text,
      });
    }
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
  async announce(p: PromptRecord): Promise<void> {
    const rec = this.herd.registry.agents.get(p.agentId);
    const note: PersonNote = { kind: "answered", agentId: p.agentId, label: rec?.label ?? p.agentId, promptId: p.promptId, status: p.settled!.status };
    // Nobody waited for it: an answer nobody received until the person reads it.
    this.unreceived(p.agentId, `answer:${p.promptId}`, p.promptId, `answered (${p.settled!.status}); nobody waited for it`);
    await this.deliver(
      { person: note },
      () => (p.announced = true),
      () => delete p.announced,
    );
  }

  /** An answer nobody received: published once by its key (src/ports/events.ts). */
  private unreceived(agentId: string, key: string, promptId: string | undefined, text: string): void {
    const rec = this.herd.registry.agents.get(agentId);
    this.herd.publish(rec ?? { agentId: agentId as AgentRecord["agentId"], label: agentId }, { kind: "answer", key, ...(promptId ? { promptId } : {}), text });
  }

  async pushResult(p: PromptRecord): Promise<void> {
    const rec = this.herd.registry.agents.get(p.agentId);
    const pushed = await this.deliver(
      { kind: "result", item: p.settled!, label: rec?.label ?? p.agentId, agent: rec?.agent ?? "" },
      () => (p.delivered = { by: "push", at: new Date(this.herd.clock.now()).toISOString() }),
      () => delete p.delivered,
    );
    if (!pushed) this.unreceived(p.agentId, `answer:${p.promptId}`, p.promptId, `answered (${p.settled!.status}); the shepherd's conversation did not take it`);
  }

  async pushDelegation(d: DelegationRecord): Promise<void> {
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
    if (!pushed) {
      const first = d.items.find((i) => i.agentId);
      if (first?.agentId)
        this.unreceived(
          first.agentId,
          `answer:${d.delegationId}`,
          undefined,
          `background delegation ${d.delegationId} finished; the shepherd's conversation did not take it`,
        );
    }
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
