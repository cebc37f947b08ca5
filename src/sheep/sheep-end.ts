/**
 * The sheep's end of the file protocol (the shepherd's end is src/protocol/local-sheep-files.ts). It
 * reports readiness, takes prompts from the inbox and submits them as real user messages, steers
 * or interrupts a running turn when told to, renews the conversation, and writes each turn's
 * result to the outbox. Prompt text never passes through the terminal. pi reaches it only through
 * the shapes of ./pi-port.ts: extensions/sheep.ts forwards pi's events to the methods below.
 */
import { chmodSync, existsSync, mkdirSync, watch, type FSWatcher } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { finalAssistant, resultStatus, usageOf } from "../protocol/assistant.ts";
import { createMarkerSync, readJson, writeJsonAtomicSync } from "../protocol/files.ts";
import { INBOX_FILE, type SheepLayout } from "../protocol/layout.ts";
import type { InboxItem, ResultFile, StatusReport } from "../protocol/messages.ts";
import { Blocked, type Question } from "./blocked.ts";
import { GoingAway } from "./going-away.ts";
import { SpendWatch } from "./spend-watch.ts";
import type { HerdrStateSink, SheepState } from "./herdr-state.ts";
import type { DialogEvent, RenewContext, SheepPi, SheepSession } from "./pi-port.ts";

/*
 * Results and reports are written synchronously (writeJsonAtomicSync): right after a turn pi's
 * event loop is at its busiest, and each async step of a write would queue behind that work (tens
 * of milliseconds when many sheep finish at once on few cores). For status.json it also keeps the
 * order: two async writes in flight can land in either order, and a dialog that opened and closed
 * must not leave "blocked" behind.
 */

interface Active {
  promptId: string;
  startedAt: string;
  /** The last assistant message of the run this prompt started. */
  last?: unknown;
  /** pi's run for it has started: only then can a steer join it instead of starting its own. */
  running: boolean;
  /** Steering messages that went into this turn. */
  steered: string[];
  /** The last answer text of this turn: what a turn stopped at its budget still returns. */
  text?: string;
  /** Set once the budget was spent during this turn: why (its numbers); the turn was aborted then. */
  overBudget?: string;
}

type Outcome = Omit<ResultFile, "promptId" | "startedAt" | "finishedAt" | "sessionPath">;

/** The sheep's own command for a fresh conversation (see renew). */
export const RENEW_COMMAND = "pi-shepherd-renew";

/** The poll beside the inbox watch, which can miss a file. */
const POLL_MS = 1000;
/** How long after agent_end a pi without agent_settled is taken as settled. */
const SETTLE_FALLBACK_MS = 1500;

type StateSink = Pick<HerdrStateSink, "update">;

export interface SheepEndOptions {
  /**
   * Tells herdr the sheep's state for its sidebar (display only), in a herdr pane. It is handed the
   * switch that marks its own herdr:blocked events, which are not another extension's dialog.
   */
  herdr?: (onOwnEvent: (own: boolean) => void) => StateSink | undefined;
}

export class SheepEnd {
  private session: SheepSession | undefined;
  private active: Active | undefined;
  private finalizeTimer: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private scanning = false;
  private rescan = false;
  /** The renewal asked for and not yet answered. */
  private renewing: string | undefined;
  private ownEvent = false;
  private readonly blocked = new Blocked();
  private readonly spend = new SpendWatch();
  private readonly goingAway = new GoingAway();
  private readonly readyAt = new Date().toISOString();
  private readonly herdr: StateSink | undefined;

  constructor(
    private readonly pi: SheepPi,
    private readonly layout: SheepLayout,
    options: SheepEndOptions = {},
  ) {
    this.herdr = options.herdr?.((own) => {
      this.ownEvent = own;
    });
  }

  // ---- pi's events, forwarded by the extension

  sessionStart(session: SheepSession): void {
    this.session = session;
    this.goingAway.watch(true);
    mkdirSync(this.layout.taken, { recursive: true, mode: 0o700 });
    this.report();
    this.watcher?.close();
    try {
      // Only a finished inbox file is worth a scan, not the temp file written before it.
      this.watcher = watch(this.layout.inbox, { persistent: false }, (_event, name) => {
        if (name === null || INBOX_FILE.test(name)) void this.scan();
      });
      this.watcher.on("error", () => undefined);
    } catch {
      this.watcher = undefined;
    }
    clearInterval(this.poll);
    this.poll = setInterval(() => void this.scan(), POLL_MS);
    this.poll.unref();
    void this.scan();
  }

  /** A new session (a renew) leaves this instance behind: the next one reads the inbox. */
  sessionShutdown(): void {
    this.session = undefined;
    this.goingAway.watch(false);
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.finalizeTimer);
  }

  /**
   * After every model response the sheep counts what it spent, and stops its turn (pi's abort, as
   * Escape does; never a kill) once its budget is spent. Every response counts, a person's too.
   */
  messageEnd(message: unknown): void {
    if ((message as { role?: string }).role !== "assistant") return;
    const over = this.spend.add((message as { usage?: unknown }).usage);
    if (!this.active) {
      this.report();
      return;
    }
    this.active.last = message;
    const text = finalAssistant(message)?.text;
    if (text) this.active.text = text;
    if (over !== undefined && this.active.overBudget === undefined) {
      this.active.overBudget = over;
      this.session?.abort();
    }
    this.report();
  }

  agentStart(): void {
    clearTimeout(this.finalizeTimer);
    if (this.active && !this.active.running) {
      this.active.running = true;
      void this.scan(); // a steer may be waiting for this turn to begin
    }
  }

  /** agent_end can be followed by a retry or a queued follow-up; only agent_settled says the run is over. */
  agentEnd(): void {
    clearTimeout(this.finalizeTimer);
    this.finalizeTimer = setTimeout(() => this.finalizeFromLast(), SETTLE_FALLBACK_MS);
  }

  agentSettled(): void {
    clearTimeout(this.finalizeTimer);
    this.finalizeFromLast();
  }

  dialogStart(event: DialogEvent): void {
    this.blocked.dialogStart(event);
    this.report();
  }

  dialogEnd(): void {
    this.blocked.dialogEnd();
    this.report();
  }

  /** An event on pi's herdr:blocked bus; the ones the herdr sink sends itself are not counted. */
  herdrBlocked(data: unknown): void {
    if (this.ownEvent) return;
    this.blocked.bus(data);
    this.report();
  }

  /** The prompt the sheep works on (the message tool records it with each message). */
  activePromptId(): string | undefined {
    return this.active?.promptId;
  }

  /** A question that starts or stops (undefined) waiting for the shepherd's reply. */
  asking(question: Question | undefined): void {
    this.blocked.asking = question;
    this.report();
  }

  // ---- reports and results

  private report(): void {
    const blocked = this.blocked.label();
    const asking = this.blocked.asking;
    const sessionPath = this.session?.sessionManager.getSessionFile();
    const status: StatusReport = {
      pid: hostPid(),
      readyAt: this.readyAt,
      // The launcher hands pi its argv: [node, pi's CLI, ...].
      ...(process.argv[1] ? { piCli: process.argv[1] } : {}),
      ...(sessionPath ? { sessionPath } : {}),
      state: this.active ? "working" : "idle",
      ...(this.active ? { activePromptId: this.active.promptId } : {}),
      ...(blocked !== undefined ? { blocked } : {}),
      ...(asking ? { asking } : {}),
      spent: this.spend.spent,
      ...(this.spend.budget ? { budget: this.spend.budget } : {}),
      updatedAt: new Date().toISOString(),
    };
    writeJsonAtomicSync(this.layout.status, status);
    const own = this.blocked.ownLabel();
    const state: SheepState = {
      working: this.active !== undefined,
      ...(blocked !== undefined ? { blocked } : {}),
      ...(own !== undefined ? { ownBlocked: own } : {}),
    };
    this.herdr?.update(state);
  }

  private async finish(result: Outcome): Promise<void> {
    if (!this.active) return;
    const done = this.active;
    this.active = undefined;
    // pi creates its session file under the default umask; like every sheep file it stays private.
    const session = this.session?.sessionManager.getSessionFile();
    if (session) {
      try {
        chmodSync(session, 0o600);
      } catch {
        // gone or not ours to change: the result matters more
      }
    }
    const sessionPath = this.session?.sessionManager.getSessionFile();
    const file: ResultFile = {
      promptId: done.promptId,
      ...result,
      ...(sessionPath ? { sessionPath } : {}),
      startedAt: done.startedAt,
      finishedAt: new Date().toISOString(),
      ...(done.steered.length ? { steered: done.steered } : {}),
      spent: this.spend.spent,
    };
    writeJsonAtomicSync(this.layout.outboxFile(done.promptId), file);
    this.report();
    void this.scan();
  }

  private finalizeFromLast(): void {
    if (!this.active) return;
    const msg = finalAssistant(this.active.last);
    if (this.goingAway.now && resultStatus(msg?.stopReason) === "cancelled") return;
    if (this.active.overBudget !== undefined) {
      // The numbers as the turn ended: a response in flight when it was stopped counts too.
      void this.finish(this.stopped(this.active, this.spend.over() ?? this.active.overBudget, msg?.usage));
      return;
    }
    void this.finish({
      status: resultStatus(msg?.stopReason),
      text: msg?.text ?? "",
      ...(msg?.stopReason ? { stopReason: msg.stopReason } : {}),
      ...(msg?.errorMessage ? { errorMessage: msg.errorMessage } : {}),
      ...(msg?.usage ? { usage: usageOf(msg.usage) } : {}),
      ...(msg?.model ? { model: msg.model } : {}),
    });
  }

  /** A turn stopped at the budget: the answer text there was, and the numbers. */
  private stopped(active: Active, why: string, usage: unknown): Outcome {
    return {
      status: "failed",
      text: active.text ?? "",
      budgetExceeded: true,
      errorMessage: `the sheep's budget is spent (${why}); its turn was stopped`,
      ...(usage ? { usage: usageOf(usage) } : {}),
    };
  }

  // ---- the inbox

  /** Taken once, never again: a file written twice, or read again after pi restarted, is dropped. */
  private taken(id: string): boolean {
    return existsSync(this.layout.takenFile(id));
  }
  private take(id: string): boolean {
    return createMarkerSync(this.layout.takenFile(id));
  }
  private drop(path: string): Promise<void> {
    return rm(path, { force: true }).catch(() => undefined);
  }

  /**
   * Goes through the inbox in order: prompts one at a time, each once nothing of ours runs;
   * steers and interrupts whenever their target's turn runs.
   */
  private async scan(): Promise<void> {
    if (this.scanning) {
      this.rescan = true;
      return;
    }
    this.scanning = true;
    try {
      do {
        this.rescan = false;
        const c = this.session;
        if (!c) return;
        const names = (await readdir(this.layout.inbox).catch(() => [] as string[])).filter((n) => INBOX_FILE.test(n)).sort();
        const ids = names.map((n) => INBOX_FILE.exec(n)![2]!);
        for (const [i, name] of names.entries()) {
          const id = ids[i]!;
          const path = `${this.layout.inbox}/${name}`;
          if (this.taken(id)) await this.drop(path);
          else if (id.startsWith("s_")) await this.steer(path, id, ids);
          else if (id.startsWith("i_")) await this.interrupt(path, id, ids, c);
          else if (this.active || this.renewing) continue;
          else if (id.startsWith("r_")) await this.renew(path, id);
          else await this.submitPrompt(path, id, c);
        }
      } while (this.rescan);
    } finally {
      this.scanning = false;
    }
  }

  /** Submits a prompt as its own turn; its result is written when that turn settles. */
  private async submitPrompt(path: string, id: string, c: SheepSession): Promise<void> {
    if (!this.take(id)) return this.drop(path);
    let item: InboxItem | undefined;
    try {
      item = await readJson<InboxItem>(path);
    } finally {
      // Read once is taken for good, and a prompt may be megabytes that nobody needs to keep.
      await this.drop(path);
    }
    // A person may be typing into this sheep; then the prompt queues behind their turn, which runs.
    const idle = c.isIdle();
    this.active = { promptId: id, startedAt: new Date().toISOString(), running: !idle, steered: [] };
    this.report();
    if (!item || item.kind === "steer" || item.kind === "interrupt" || item.kind === "renew" || item.promptId !== id || typeof item.text !== "string") {
      await this.finish({ status: "failed", text: "", errorMessage: "the prompt file could not be read" });
      return;
    }
    this.spend.hold(item.budget);
    // Spent before it began: the prompt is answered at once, nothing goes to the model.
    const over = this.spend.over();
    if (over !== undefined) {
      await this.finish(this.stopped(this.active, over, undefined));
      return;
    }
    if (idle) this.pi.sendUserMessage(item.text);
    else this.pi.sendUserMessage(item.text, { deliverAs: "followUp" });
  }

  /**
   * A steer joins the running turn of its target. It waits while the target has not started, and
   * is dropped once the target's turn is over (the shepherd counts it as missed).
   */
  private async steer(path: string, id: string, waiting: readonly string[]): Promise<void> {
    const item = await readJson<InboxItem>(path);
    if (item?.kind !== "steer" || item.steerId !== id || typeof item.text !== "string" || typeof item.target !== "string") {
      this.take(id);
      return this.drop(path);
    }
    if (this.active?.promptId === item.target) {
      if (!this.active.running) return; // its turn has not begun: a steer now would race pi starting it
      if (!this.take(id)) return this.drop(path);
      await this.drop(path);
      this.active.steered.push(id);
      this.pi.sendUserMessage(item.text, { deliverAs: "steer" });
      return;
    }
    return this.dropUnlessWaiting(path, id, item.target, waiting);
  }

  /**
   * An interrupt aborts its target's running turn (pi's own abort, as Escape does): the turn ends
   * with stopReason "aborted" and its result is written as cancelled. It waits while the target
   * has not started, and is dropped once the target's turn is over.
   */
  private async interrupt(path: string, id: string, waiting: readonly string[], c: SheepSession): Promise<void> {
    const item = await readJson<InboxItem>(path);
    if (item?.kind !== "interrupt" || item.interruptId !== id || typeof item.target !== "string") {
      this.take(id);
      return this.drop(path);
    }
    if (this.active?.promptId === item.target) {
      if (!this.active.running) return;
      if (!this.take(id)) return this.drop(path);
      await this.drop(path);
      c.abort();
      return;
    }
    return this.dropUnlessWaiting(path, id, item.target, waiting);
  }

  /** A steer or interrupt whose target is not running: it waits for a target still in the inbox. */
  private async dropUnlessWaiting(path: string, id: string, target: string, waiting: readonly string[]): Promise<void> {
    if (waiting.includes(target) && !this.taken(target)) return;
    this.take(id);
    await this.drop(path);
  }

  // ---- a renewal

  /**
   * A fresh conversation in this same pi, through pi's own new-session path: only a command's
   * context may start one, so the sheep runs its own command through pi's command dispatch (never
   * keys). The answer is outbox/<renewId>.json: completed with the new session file, or failed,
   * and the shepherd then closes the sheep as it would have.
   */
  private async renew(path: string, id: string): Promise<void> {
    if (!this.take(id)) return this.drop(path);
    const item = await readJson<InboxItem>(path);
    await this.drop(path);
    if (item?.kind !== "renew" || item.renewId !== id) return this.renewed(id, { ok: false, why: "the renew file could not be read" });
    this.renewing = id;
    this.pi.sendUserMessage(`/${RENEW_COMMAND} ${id}`, { expandPromptTemplates: true });
  }

  /** The sheep's own command, run by pi's command dispatch with a command's context. */
  async renewCommand(args: string, c: RenewContext): Promise<void> {
    const id = args.trim();
    // Only the renewal the shepherd asked for: typed by a person, it does nothing.
    if (!this.renewing || id !== this.renewing) return;
    try {
      await c.waitForIdle();
      let sessionPath: string | undefined;
      const r = await c.newSession({
        withSession: async (fresh) => {
          sessionPath = fresh.sessionManager.getSessionFile();
        },
      });
      this.renewing = undefined;
      if (!r.cancelled) this.spend.reset();
      this.renewed(id, r.cancelled ? { ok: false, why: "an extension cancelled the new session" } : { ok: true, ...(sessionPath ? { sessionPath } : {}) });
    } catch (e) {
      this.renewing = undefined;
      this.renewed(id, { ok: false, why: `pi could not start a new session: ${e instanceof Error ? e.message : String(e)}` });
    }
  }

  /**
   * pi's input event: a pi that does not run an extension's own command line would send it to the
   * model as words. True when this input is the renewal's command line, caught here (the renewal fails).
   */
  input(text: string): boolean {
    if (!this.renewing || text !== `/${RENEW_COMMAND} ${this.renewing}`) return false;
    const id = this.renewing;
    this.renewing = undefined;
    this.renewed(id, { ok: false, why: "this pi does not run commands an extension sends" });
    void this.scan();
    return true;
  }

  private renewed(id: string, r: { ok: true; sessionPath?: string } | { ok: false; why: string }): void {
    const now = new Date().toISOString();
    const file: ResultFile = r.ok
      ? { promptId: id, status: "completed", text: "", ...(r.sessionPath ? { sessionPath: r.sessionPath } : {}), startedAt: now, finishedAt: now }
      : { promptId: id, status: "failed", text: "", errorMessage: r.why, startedAt: now, finishedAt: now };
    writeJsonAtomicSync(this.layout.outboxFile(id), file);
  }
}

/**
 * The pid the shepherd can see: in a sandbox (its own PID namespace) ours means nothing outside, so
 * the pane's command tells us its bubblewrap's (src/sandbox/bwrap.ts): alive exactly while we are.
 */
function hostPid(): number {
  const outer = Number(process.env.PI_SHEPHERD_HOST_PID);
  return Number.isSafeInteger(outer) && outer > 0 ? outer : process.pid;
}
