/**
 * The shepherd's session in a pi: the app composed once on first need, the session begun once
 * (attach, pushes, warm pool) before any call runs on it, the entry every edge calls through, and
 * the end (quit or reload) that lets go of all of it. pi's wiring (extensions/shepherd-main.ts)
 * only forwards pi's events and calls here; what it needs of pi is in ports.ts.
 */
import type { ShepherdApp } from "../compose.ts";
import { errorText } from "../domain/errors.ts";
import { printable } from "../domain/printable.ts";
import { type AuditSink, stamped } from "../ports/audit.ts";
import type { DispatchContext } from "../context/context.ts";
import type { EntryDeps } from "../edge/entry.ts";
import { beginSession } from "./begin.ts";
import { speculativeWants, StreamingCalls } from "../edge/speculation.ts";
import type { SessionClock, SessionContext, SessionPorts } from "./ports.ts";

/** How long a full doctor waits for the session to begin before it answers without the shepherd's own looks. */
export const DOCTOR_SESSION_WAIT_MS = 20_000;

/** What a caller adds to the dispatch context: the tool its signal and progress, /shepherd and the panel their edge. */
export type EntryExtra = Pick<DispatchContext, "signal" | "onProgress" | "byPerson" | "edge">;

const systemClock: SessionClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((r) => setTimeout(r, ms).unref()),
};

export class ShepherdSession<C extends SessionContext> {
  private app: Promise<ShepherdApp> | undefined;
  private composed: ShepherdApp | undefined;
  private session: Promise<void> | undefined;
  /** The latest context pi gave us: warnings found later (a failing state file) are shown there. */
  private lastCtx: C | undefined;
  private auditSink: AuditSink | undefined;
  private readonly clock: SessionClock;
  private readonly calls = new StreamingCalls();

  constructor(private readonly ports: SessionPorts<C>) {
    this.clock = ports.clock ?? systemClock;
  }

  /** The composed app, once it is: what the widget and live views draw from. */
  get ready(): ShepherdApp | undefined {
    return this.composed;
  }

  /**
   * A `shepherd` call the model is still writing (a piece of its arguments' text, and the arguments
   * as pi parsed them so far): the sheep it will start boot ahead in the warm pool, for the call to
   * take (issue 36). `ended`: the call is whole; nothing more is booted for it.
   */
  streaming(callId: string, piece: { delta: string; args: unknown } | "ended"): void {
    if (piece === "ended") {
      this.calls.ended(callId);
      return;
    }
    const app = this.composed;
    if (!app?.loaded.settings.speculativeStart) return;
    const { maxParallel } = app.loaded.settings;
    const wants = this.calls.next(callId, piece.delta, (complete) => speculativeWants(piece.args, { complete, maxParallel }));
    if (wants) void app.shepherd.speculate(wants);
  }

  /** The app if it is composed or on its way: completions must not start a runtime. */
  current(): Promise<ShepherdApp> | undefined {
    return this.app;
  }

  /** A warning may quote a sheep's record or files: what reaches a terminal is printable. */
  warn(message: string): void {
    if (this.lastCtx?.hasUI) this.lastCtx.ui.notify(printable(message), "warning");
    else this.ports.stderr(printable(message));
  }

  /** The app the tool uses, composed on first need; a failed compose is tried again by the next call. */
  appFor(ctx: C): Promise<ShepherdApp> {
    this.lastCtx = ctx;
    const projectTrusted = this.ports.projectTrusted(ctx);
    this.app ??= Promise.all([this.ports.parts(), this.audit()])
      .then(([p, a]) => p.composeShepherd({ cwd: ctx.cwd, onWarning: (m) => this.warn(m), audit: a.sink, projectTrusted }))
      .then((a) => (this.composed = a))
      .catch((e) => {
        this.app = undefined; // let a later call try again, e.g. after tmux was installed
        throw e;
      });
    return this.app;
  }

  /**
   * Taking back the sheep of before a reload (or of a shepherd that died), and from then on
   * pushing what nobody waits for: once per session, before any tool call or subcommand runs.
   */
  begin(ctx: C): Promise<void> {
    this.session ??= this.appFor(ctx)
      .then((current) => beginSession(current, ctx, this.ports))
      .catch(() => {
        this.session = undefined; // no runtime yet: the call that needs one reports why, and tries again
      });
    return this.session;
  }

  /**
   * pi's session began: take the sheep back at once, so their ids keep working and prompts sent
   * before can still be waited for. A pi without a UI (print mode, often a one-shot run by another
   * tool) begins only when a call needs the shepherd. Not awaited by pi: its start does not wait
   * for the shepherd's parts to load.
   */
  async sessionStart(ctx: C): Promise<void> {
    if (!ctx.hasUI) return;
    await this.begin(ctx);
    // The panel runs on the begun session (its routes enter through it), so it comes back after it.
    await this.resumePanel(ctx);
  }

  /** What the tool, /shepherd and the panel all enter through: the shepherd when it can be composed, the doctor always. */
  entry(ctx: C, extra: EntryExtra = {}): EntryDeps {
    return {
      ...(extra.edge ? { edge: extra.edge } : {}),
      context: async () => {
        await this.begin(ctx);
        return { ...this.ports.dispatchContext(await this.appFor(ctx), ctx), ...extra };
      },
      doctor: async (brief) => {
        // Only a composed shepherd looks for what a killed one left on its hosts: a full doctor asked
        // first in a session waits for the session to begin (bounded: a doctor must answer).
        if (!brief) await Promise.race([this.begin(ctx), this.clock.sleep(this.ports.doctorWaitMs ?? DOCTOR_SESSION_WAIT_MS)]);
        return (await this.ports.parts()).doctor({
          cwd: ctx.cwd,
          brief,
          ...(this.composed ? { shepherd: this.composed.shepherd } : {}),
          projectTrusted: this.ports.projectTrusted(ctx),
        });
      },
      audit: (event) => {
        // Stamped now, written in the order called: each write waits on the same loaded parts.
        const at = this.clock.now();
        void this.audit().then((a) => a.sink.record(stamped(event, a.owner, at)));
      },
    };
  }

  /** pi quits or reloads: everything this session holds is let go; on quit, idle sheep are closed. */
  async shutdown(reason: string): Promise<void> {
    this.ports.widget.stop();
    await this.ports.panel.shutdown(reason); // the port closes on quit and on reload alike
    await this.session; // a session still beginning finishes first, so what it starts is disposed of too
    if (!this.app) return;
    let current: ShepherdApp;
    try {
      current = await this.app;
    } catch {
      return;
    }
    if (reason === "quit" && current.loaded.settings.closeOnExit) {
      // A quit never throws work away: what still works, or holds a result nobody received, keeps
      // running for the next shepherd; idle sheep are closed. pi has stopped its screen by now
      // (interactive) or reads no more UI requests (RPC), so the one line goes to stderr.
      const { quitText } = await this.ports.parts();
      const said = quitText(await current.shepherd.quit());
      if (said) this.ports.stderr(printable(said));
    }
    // Awaited: a push under way goes out through this pi, and the reloaded shepherd reads what this one wrote last.
    await current.shepherd.dispose();
    // What is still pending stays in the outbox; the lock is let go so the next shepherd sends it.
    await current.notify.notifier.stop();
    // The hosts' connections end with the shepherd; their sheep go on working for the next one.
    await current.hosts.close();
    // Sandboxed sheep go on too; their egress is served again when the next shepherd attaches them.
    await current.egress.closeAll();
  }

  private async audit(): Promise<{ sink: AuditSink; owner: string }> {
    const p = await this.ports.parts();
    this.auditSink ??= p.auditTrail(this.ports.env, (m) => this.warn(m));
    return { sink: this.auditSink, owner: p.processOwner() };
  }

  /** The panel on again after a reload that closed it, or by the user's setting; a port taken is said, not thrown. */
  private async resumePanel(ctx: C): Promise<void> {
    try {
      const url = await this.ports.panel.resume(ctx);
      if (url && ctx.hasUI) ctx.ui.notify(`pi-shepherd panel: ${url}`, "info");
    } catch (e) {
      this.warn(`pi-shepherd panel: ${errorText(e)}`);
    }
  }
}
