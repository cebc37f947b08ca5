/**
 * The courier brings the shepherd's conversation what nobody waits for, each thing exactly once:
 * results of prompts sent with notify, questions of sheep, and background delegations once their
 * last task is final. Its mark is written through before a push goes out, so neither a reload nor
 * a crash pushes anything twice; what a wait returned is the conversation's already and is not
 * pushed. Progress and done messages are told to the person instead.
 */
import { close } from "./close.ts";
import { owesDelivery, type Herd } from "./herd.ts";
import type { DelegateItem } from "./delegate.ts";
import type { DelegateMode, DelegationRecord, PromptRecord, SheepMessage, WaitItem } from "./types.ts";
import { look, RECHECK_TICKS, stillAlive } from "./wait.ts";

/** One task of a pushed background delegation: as a delegate result, with its prompt. */
export interface PushedItem extends DelegateItem {
  promptId?: string;
}

export type Push =
  | { kind: "result"; item: WaitItem; label: string; agent: string }
  | { kind: "question"; agentId: string; label: string; agent: string; message: SheepMessage }
  | { kind: "delegation"; delegationId: string; mode: DelegateMode; items: PushedItem[] };

export interface Notice {
  agentId: string;
  label: string;
  message: SheepMessage;
}

export interface CourierSink {
  /** Hands one push to the conversation; throws when it could not, and it is tried again later. */
  deliver(push: Push): void;
  /** Progress and done messages of a sheep, for the person. */
  notice?(notice: Notice): void;
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
    await this.loop;
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
      const ms = this.refused || this.watched().length > 0 ? herd.opts.livenessIntervalMs : IDLE_SLEEP_MS;
      try {
        await herd.clock.sleep(ms, this.wake.signal);
        this.dirty = true;
        this.quiet = true;
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
    for (const p of this.watched()) {
      if (!this.sink) return;
      const rec = reg.agents.get(p.agentId);
      if (quiet && (await stillAlive(herd, rec))) continue;
      await look(herd, p, rec);
    }
    for (const rec of quiet ? [] : [...reg.agents.values()]) {
      if (!this.sink) return;
      if (rec.state !== "closed") await this.readMessages(rec.agentId);
    }
    for (const p of [...reg.prompts.values()]) {
      if (!this.sink) return;
      if (p.notify && p.settled && !p.delivered && !herd.waiting.has(p.promptId)) await this.pushResult(p);
    }
    for (const d of [...reg.delegations.values()]) {
      if (!this.sink) return;
      if (!d.delivered && d.done && !this.runners.has(d.delegationId) && d.items.every((i) => i.status !== undefined)) await this.pushDelegation(d);
    }
  }

  private async readMessages(agentId: string): Promise<void> {
    const { herd } = this;
    const rec = herd.registry.agents.get(agentId);
    if (!rec) return;
    // A log that cannot be read now changes nothing: read as empty, it would lower the count and
    // push every message past it again once it can be read.
    const messages = await herd.opts.host.messages(agentId).catch(() => undefined);
    if (!messages) return;
    const from = Math.min(rec.messagesHandled ?? 0, messages.length);
    let handled = from;
    for (; handled < messages.length; handled++) {
      const m = messages[handled]!;
      if (m.kind !== "question") {
        if (m.kind === "progress") this.lastProgress.set(agentId, m);
        this.sink?.notice?.({ agentId, label: rec.label, message: m });
        continue;
      }
      if (herd.claimedQuestions.has(m.messageId)) continue;
      // A wait on this sheep returns the question itself (as blocked), answer included in its turn.
      if (m.awaitReply && herd.waiting.has(agentId)) break;
      const upTo = handled + 1;
      const pushed = await this.deliver(
        { kind: "question", agentId, label: rec.label, agent: rec.agent, message: m },
        () => (rec.messagesHandled = upTo),
        () => (rec.messagesHandled = handled),
      );
      if (!pushed) break;
    }
    if (handled > (rec.messagesHandled ?? 0)) {
      rec.messagesHandled = handled;
      await herd.persist();
    }
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

  /** Marks, writes the mark through, then pushes; a push that fails is unmarked for a later try. */
  private async deliver(push: Push, mark: () => void, unmark: () => void): Promise<boolean> {
    const sink = this.sink;
    if (!sink) return false;
    mark();
    await this.herd.persist();
    try {
      sink.deliver(push);
      return true;
    } catch {
      unmark();
      this.refused = true;
      await this.herd.persist();
      return false;
    }
  }
}
