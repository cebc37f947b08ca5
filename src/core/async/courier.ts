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
import { owesDelivery, type Herd } from "../herd/herd.ts";
import type { PromptRecord, SheepMessage } from "../../ports/types.ts";
import { look, RECHECK_TICKS, stillAlive } from "../prompts/wait.ts";
import { bounded } from "../herd/bounded.ts";
import { Delivery, persons } from "./delivery.ts";
import type { CourierSink } from "./push.ts";

// The edges name what the courier hands out by the courier.
export type { CourierSink, Held, Notice, PersonNote, Push, PushedItem, QuestionPush } from "./push.ts";

/** How long stopping waits for a sweep under way (a look at a silent machine ends at its call's own deadline). */
const STOP_WAIT_MS = 2_000;

/** How long the courier sleeps when nothing it carries can change without a file or a call telling it. */
const IDLE_SLEEP_MS = 60_000;

/** Past this many sheep rung between two sweeps, the sweep reads everyone (the set stays bounded). */
const MAX_RUNG = 1024;

export class Courier {
  private dirty = true;
  private wake: AbortController | undefined;
  /** Woken by its timer, not by a bell: no file changed since the last sweep. */
  private quiet = false;
  private quietSweeps = 0;
  /**
   * Sheep whose bells rang since the last sweep: a sweep woken by them reads their files alone, so
   * a herd's answers landing one by one cost a read each, not a read of every sheep each. Anything
   * else (a nudge, a sink attached, a hold due, the periodic recheck) reads everyone.
   */
  private readonly rung = new Set<string>();
  private everyone = true;
  private loop: Promise<void> | undefined;
  private readonly stopHearing: () => void;
  /** Background delegations whose runner still runs here: only the runner knows what comes next. */
  readonly runners = new Map<string, Promise<void>>();
  private readonly post: Delivery;
  /** The latest progress message of each sheep, for the widget. */
  readonly lastProgress: ReadonlyMap<string, SheepMessage>;

  constructor(private readonly herd: Herd) {
    this.post = new Delivery(herd);
    this.lastProgress = this.post.lastProgress;
    this.stopHearing = herd.bells.overhear((agentId) => this.kick(agentId));
  }

  /** Starts delivering; what waited for a conversation meanwhile goes out first. */
  attach(sink: CourierSink): void {
    this.post.sink = sink;
    this.kick();
    this.loop ??= this.run();
  }

  /** Something may have changed (of one sheep, when named): look again soon. */
  kick(agentId?: string): void {
    if (agentId === undefined || this.rung.size >= MAX_RUNG) this.everyone = true;
    else this.rung.add(agentId);
    this.dirty = true;
    this.wake?.abort();
  }

  /** No more pushes; resolves once a push under way has gone out (or not started). */
  async stop(): Promise<void> {
    this.stopHearing();
    this.post.sink = undefined;
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
    while (this.post.sink && !herd.disposed) {
      if (this.dirty) {
        this.dirty = false;
        this.post.refused = false;
        // Every fifth quiet sweep reads the files all the same: for a watch event the file
        // system missed, and for the pid witness.
        const quiet = this.quiet && ++this.quietSweeps % RECHECK_TICKS !== 0;
        const only = quiet || this.everyone || this.quiet ? undefined : new Set(this.rung);
        this.quiet = false;
        this.everyone = false;
        this.rung.clear();
        try {
          await this.sweep(quiet, only);
        } catch {
          // a file that could not be read now is read at the next look
        }
        continue;
      }
      this.wake = new AbortController();
      // While results are owed, the sheep's liveness is asked about once an interval: a pane that
      // went away rings no file bell.
      let ms = this.post.refused || this.watched().length > 0 ? herd.opts.livenessIntervalMs : IDLE_SLEEP_MS;
      const hold = this.post.holdUntil;
      if (hold !== undefined) ms = Math.max(0, Math.min(ms, hold - herd.clock.now()));
      try {
        await herd.clock.sleep(ms, this.wake.signal);
        this.dirty = true;
        // What was held back is due: the messages are read again, not only the panes asked about.
        this.quiet = hold === undefined || herd.clock.now() < hold;
        if (!this.quiet) this.everyone = true;
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
      if (persons(p) && this.post.sink?.person) return true;
      if (!p.delegationId || this.runners.has(p.delegationId)) return false;
      return owesDelivery(this.herd, p);
    });
  }

  /**
   * Looks at what is owed and pushes what is due. A quiet sweep (no bell since the last) reads
   * no file: the sheep's files ring their bells when they change, so only a pane that went can
   * be news, and the one batched liveness answer tells.
   */
  private async sweep(quiet: boolean, only?: ReadonlySet<string>): Promise<void> {
    const { herd } = this;
    const reg = herd.registry;
    // A hold of a sheep not read now stays: only a sweep of everyone sets every hold anew.
    if (!quiet && !only) this.post.holdUntil = undefined;
    // Each sheep is looked at on its own: one on a machine that does not answer holds up no other's push.
    await Promise.all(
      this.watched().map(async (p) => {
        if (!this.post.sink) return;
        const rec = reg.agents.get(p.agentId);
        if ((quiet || (only && !only.has(p.agentId))) && (await stillAlive(herd, rec))) return;
        await look(herd, p, rec).catch(() => undefined);
      }),
    );
    if (!this.post.sink) return;
    const unread = quiet ? [] : [...reg.agents.values()].filter((rec) => rec.state !== "closed" && (!only || only.has(rec.agentId)));
    const read = await Promise.all(unread.map((rec) => herd.opts.files.messages(rec.agentId).catch(() => undefined)));
    for (const [i, rec] of unread.entries()) {
      if (!this.post.sink) return;
      await this.post.readMessages(rec.agentId, read[i]);
    }
    for (const p of [...reg.prompts.values()]) {
      if (!this.post.sink) return;
      if (p.notify && p.settled && !p.delivered && !herd.waiting.has(p.promptId)) await this.post.pushResult(p);
      else if (persons(p) && p.settled && !p.shown && !p.announced && !herd.waiting.has(p.promptId)) await this.post.announce(p);
    }
    for (const d of [...reg.delegations.values()]) {
      if (!this.post.sink) return;
      if (!d.delivered && d.done && !this.runners.has(d.delegationId) && d.items.every((i) => i.status !== undefined)) await this.post.pushDelegation(d);
    }
  }
}
