/**
 * The shepherd itself, loaded by the entry (extensions/shepherd.ts) only in a pi that may
 * shepherd: registers the `shepherd` tool, the /shepherd command, the widget and the session
 * handlers.
 */
import type { Static } from "@sinclair/typebox";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ShepherdApp } from "../src/compose.ts";
import type { PersonNote } from "../src/core/shepherd.ts";
import { errorText } from "../src/domain/errors.ts";
import { warmSheepWithin } from "../src/domain/bounds.ts";
import { printable } from "../src/domain/printable.ts";
import { type AuditSink, stamped } from "../src/ports/audit.ts";
import type { DispatchContext } from "../src/tool/context.ts";
import type { EntryDeps } from "../src/tool/entry.ts";
import { toolDescription } from "../src/tool/description.ts";
import { prepareArguments } from "../src/tool/params.ts";
import { shepherdParameters } from "../src/tool/schema.ts";
import { throttle } from "../src/tool/throttle.ts";
import { commandOutput } from "./command-output.ts";
import { HerdWidget } from "./herd-widget.ts";
import { FrameClock } from "./live-text.ts";
import { parts } from "./lazy-parts.ts";
import { dispatchContext, projectTrusted as projectTrustedOf } from "./pi-context.ts";
import { PUSH_TYPE } from "../src/tool/push-type.ts";
import { renderCall, renderPush, renderResult } from "./render.ts";
import { PanelGlue } from "./panel.ts";
import { registerShepherdCommand } from "./shepherd-command.ts";

const DESCRIPTION = toolDescription();

/** How long a full doctor waits for the session to begin before it answers without the shepherd's own looks. */
const DOCTOR_SESSION_WAIT_MS = 20_000;

const GUIDELINES = [
  "shepherd: talking to a sheep takes two calls: `prompt` returns a promptId at once, then `wait` returns the answer. Never expect an answer from `prompt`.",
  "shepherd: for short work whose answer you need before you can go on, `prompt` then `wait`. To run work in parallel, `start` several sheep, `prompt` each one, then make ONE `wait` call with all their `promptIds`.",
  'shepherd: to keep talking with the person while sheep work, `prompt` with `notify: true` (or `delegate` with `background: true`) and end your turn: each result comes back to you as a new message by itself ("[pi-shepherd] Result of …"); do not also `wait` for it.',
  'shepherd: to correct a sheep mid-task, `prompt` it with `deliverAs: "steer"` (the answer still comes on its running prompt); to line up the next task behind the current one, `deliverAs: "followUp"` (at most 8 queued). Without deliverAs a busy sheep refuses with [prompt_pending].',
  'shepherd: a sheep may ask you a question (a message "[pi-shepherd] Sheep … asks (m_…)", or a `wait` result `blocked` with a question): answer with `reply` {agentId, messageId, text}. `messages` lists what sheep told you.',
  "shepherd: a `wait` that returns `timeout` stopped nothing; call `wait` again with the same promptId. Give a `requestId` when a prompt must not be sent twice (e.g. when retrying after an error).",
  "shepherd: sheep stay open after `wait`; `close` each sheep when you no longer need it.",
  "shepherd: a sheep that edits files should get `isolate: true` (its own git worktree and branch); trust the `evidence` in its result over its words, and `land` its work when it is right.",
];

export function shepherdExtension(pi: ExtensionAPI): void {
  let app: Promise<ShepherdApp> | undefined;
  let ready: ShepherdApp | undefined;
  // One clock reading per drawn frame for the widget and every progress view alike.
  const clock = new FrameClock();
  const widget = new HerdWidget(() => ready?.shepherd, clock);
  const live = { clock, view: (agentId: string) => ready?.shepherd.view(agentId) };
  /** The latest context pi gave us: warnings found later (a failing state file) are shown there. */
  let lastCtx: ExtensionContext | undefined;
  // A warning may quote a sheep's record or files: what reaches a terminal is printable.
  const warn = (message: string) => {
    if (lastCtx?.hasUI) lastCtx.ui.notify(printable(message), "warning");
    else console.error(printable(message));
  };
  let auditSink: AuditSink | undefined;
  const audit = async () => {
    const p = await parts();
    auditSink ??= p.auditTrail(process.env, warn);
    return { sink: auditSink, owner: p.processOwner() };
  };
  const appFor = (ctx: ExtensionContext) => {
    lastCtx = ctx;
    const projectTrusted = projectTrustedOf(ctx);
    app ??= Promise.all([parts(), audit()])
      .then(([p, a]) => p.composeShepherd({ cwd: ctx.cwd, onWarning: warn, audit: a.sink, projectTrusted }))
      .then((a) => (ready = a))
      .catch((e) => {
        app = undefined; // let a later call try again, e.g. after tmux was installed
        throw e;
      });
    return app;
  };
  /**
   * Taking back the sheep of before a reload (or of a shepherd that died), and from then on
   * pushing what nobody waits for: once per session, before any tool call or subcommand runs.
   */
  let session: Promise<void> | undefined;
  const sessionFor = (ctx: ExtensionContext) => {
    session ??= beginSession(ctx).catch(() => {
      session = undefined; // no runtime yet: the call that needs one reports why, and tries again
    });
    return session;
  };

  /** What the tool and /shepherd both enter through: the shepherd when it can be composed, the doctor always. */
  const entry = (ctx: ExtensionContext, extra: Pick<DispatchContext, "signal" | "onProgress" | "byPerson" | "edge"> = {}): EntryDeps => ({
    ...(extra.edge ? { edge: extra.edge } : {}),
    context: async () => {
      await sessionFor(ctx);
      return { ...dispatchContext(await appFor(ctx), ctx), ...extra };
    },
    doctor: async (brief) => {
      // Only a composed shepherd looks for what a killed one left on its hosts: a full doctor asked
      // first in a session waits for the session to begin (bounded: a doctor must answer).
      if (!brief) await Promise.race([sessionFor(ctx), new Promise<void>((r) => setTimeout(r, DOCTOR_SESSION_WAIT_MS).unref())]);
      return (await parts()).doctor({
        cwd: ctx.cwd,
        brief,
        ...(ready ? { shepherd: ready.shepherd } : {}),
        projectTrusted: projectTrustedOf(ctx),
      });
    },
    audit: (event) => {
      // Stamped now, written in the order called: each write waits on the same loaded parts.
      const at = Date.now();
      void audit().then((a) => a.sink.record(stamped(event, a.owner, at)));
    },
  });

  pi.registerTool({
    name: "shepherd",
    label: "Shepherd",
    description: DESCRIPTION,
    promptSnippet: "Start persistent pi sheep in panes, prompt them without waiting, then wait for one or many answers",
    promptGuidelines: GUIDELINES,
    parameters: shepherdParameters,
    // Before pi's schema check, which would reject task objects sent as JSON text.
    prepareArguments: (args) => prepareArguments(args) as Static<typeof shepherdParameters>,
    renderCall: (args, theme, context) => renderCall(args, theme, context),
    renderResult: (result, options, theme, context) => renderResult(result, options, theme, context, live),
    async execute(_toolCallId, params, signal, onUpdate, ctx) {
      // A few updates a second at most: the TUI redraws on each.
      const progress = throttle(250, (u: { content: { type: "text"; text: string }[]; details: Record<string, unknown> }) => onUpdate?.(u));
      try {
        const { runToolCall } = await parts();
        return await widget.during(ctx, () =>
          runToolCall(
            params,
            entry(ctx, {
              ...(signal ? { signal } : {}),
              onProgress: (text, details) => progress.push({ content: [{ type: "text", text }], details }),
            }),
          ),
        );
      } finally {
        progress.cancel();
      }
    },
  });

  // Not the agent turn's abort signal for /shepherd: ctx.signal belongs to that turn, and Escape on
  // it should not cancel what the person started by hand (a /shepherd wait has its own Escape).
  // The browser panel runs on the same entry as the tool and /shepherd.
  const show = commandOutput(pi);
  const panel = new PanelGlue({
    entry: (ctx) => entry(ctx),
    settings: async (ctx) => (await appFor(ctx)).loaded.settings,
    tell: (ctx, text) => {
      if (ctx.hasUI) show(ctx, "", [{ level: "info", text }]);
    },
  });
  registerShepherdCommand(pi, {
    appFor,
    current: () => app,
    entry: (ctx, extra) => entry(ctx, extra),
    panel: (ctx, mode) => panel.command(ctx, mode),
    onChange: (ctx) => widget.touch(ctx),
    show,
  });
  pi.registerMessageRenderer(PUSH_TYPE, (message, options, theme) => renderPush(message, options, theme));

  // After /reload (or in a new shepherd on the same agent dir) the sheep still run: take them back
  // at once, so their ids keep working and prompts sent before can still be waited for. Not
  // awaited: pi's start does not wait for the shepherd's parts to load. A pi without a UI (print
  // mode, often a one-shot run by another tool) begins only when a call needs the shepherd.
  pi.on("session_start", (_event, ctx) => {
    // The panel runs on the begun session (its routes enter through it), so it comes back after it.
    if (ctx.hasUI) void sessionFor(ctx).then(() => resumePanel(ctx));
  });

  async function beginSession(ctx: ExtensionContext): Promise<void> {
    const current = await appFor(ctx);
    const { heldText, leftoverText, noticeText, personNoteText, poolDefinitions, pushMessage, reattachText } = await parts();
    const report = await current.shepherd.attach().catch((e) => ({ adopted: [], pruned: [], live: [], warnings: [errorText(e)] }));
    if (ctx.hasUI) {
      for (const w of report.warnings) ctx.ui.notify(printable(w), "warning");
      const said = reattachText(report);
      if (said) ctx.ui.notify(said, "info");
      if (report.live.length > 0) widget.touch(ctx);
      // What a shepherd killed mid-start left, here and on the hosts, is said once; not awaited:
      // a host that does not answer must not hold up the session (each remote call has its deadline).
      void current.shepherd
        .leftovers()
        .then((l) => {
          const left = leftoverText(l);
          if (left) ctx.ui.notify(left, "warning");
        })
        .catch(() => undefined);
    }
    // Results nobody waits for, questions of sheep and background delegations come in as messages
    // of their own: starting a turn when the shepherd is idle, after its current one when busy.
    current.shepherd.deliverTo({
      deliver: (push) => pi.sendMessage(pushMessage(push), { triggerTurn: true, deliverAs: "followUp" }),
      notice: (n) => {
        if (!ctx.hasUI) return;
        // A sheep's own words: never an escape sequence on the person's terminal.
        ctx.ui.notify(printable(noticeText(n)), "info");
        widget.touch(ctx);
      },
      // A person's prompt's questions and finish: in the transcript, where /shepherd's answers stand.
      ...(ctx.hasUI ? { person: (n: PersonNote) => show(ctx, "", [{ level: "info", text: personNoteText(n) }]) } : {}),
      // A flood of one sheep's messages held back by the rate limit: one line, not one per message.
      held: (h) => {
        if (ctx.hasUI) ctx.ui.notify(printable(heldText(h.label, h.count)), "info");
      },
    });
    const { settings } = current.loaded;
    // A one-shot pi keeps no pool: it would only boot sheep to close them at its exit. The default
    // pool boots nothing: it holds the delegated sheep that come back, within warmMemory.
    if (ctx.hasUI && (warmSheepWithin(settings.warmMemory) > 0 || Object.values(settings.warm).some((n) => n > 0))) {
      current.shepherd.keepWarm({
        sizes: settings.warm,
        memoryMb: settings.warmMemory,
        cwd: ctx.cwd,
        placement: settings.placement,
        direction: settings.direction,
        definitions: () => poolDefinitions({ cwd: ctx.cwd, agentDir: current.agentDir, bundledDir: current.bundledDir, models: settings.models }),
      });
      widget.touch(ctx);
    }
  }

  /** The panel on again after a reload that closed it, or by the user's setting; a port taken is said, not thrown. */
  async function resumePanel(ctx: ExtensionContext): Promise<void> {
    try {
      const url = await panel.resume(ctx);
      if (url && ctx.hasUI) ctx.ui.notify(`pi-shepherd panel: ${url}`, "info");
    } catch (e) {
      warn(`pi-shepherd panel: ${errorText(e)}`);
    }
  }

  pi.on("session_shutdown", async (event) => {
    widget.stop();
    await panel.shutdown(event.reason); // the port closes on quit and on reload alike
    await session; // a session still beginning finishes first, so what it starts is disposed of too
    if (!app) return;
    let current: ShepherdApp;
    try {
      current = await app;
    } catch {
      return;
    }
    if (event.reason === "quit" && current.loaded.settings.closeOnExit) {
      // A quit never throws work away: what still works, or holds a result nobody received, keeps
      // running for the next shepherd; idle sheep are closed. pi has stopped its screen by now
      // (interactive) or reads no more UI requests (RPC), so the one line goes to stderr.
      const { quitText } = await parts();
      const said = quitText(await current.shepherd.quit());
      if (said) console.error(printable(said));
    }
    // Awaited: a push under way goes out through this pi, and the reloaded shepherd reads what this one wrote last.
    await current.shepherd.dispose();
    // The hosts' connections end with the shepherd; their sheep go on working for the next one.
    await current.hosts.close();
  });
}
