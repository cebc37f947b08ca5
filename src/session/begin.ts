/**
 * What a session does once when it begins: takes back the sheep of before a reload (or of a
 * shepherd that died), says what it found, and from then on pushes what nobody waits for and
 * keeps the warm pool.
 */
import type { ShepherdApp } from "../compose.ts";
import type { PersonNote } from "../core/shepherd.ts";
import { warmSheepWithin } from "../domain/bounds.ts";
import { errorText } from "../domain/errors.ts";
import { printable } from "../domain/printable.ts";
import type { SessionContext, SessionPorts } from "./ports.ts";

export async function beginSession<C extends SessionContext>(current: ShepherdApp, ctx: C, ports: SessionPorts<C>): Promise<void> {
  const { heldText, leftoverText, noticeText, personNoteText, poolDefinitions, pushMessage, reattachText } = await ports.parts();
  const report = await current.shepherd.attach().catch((e) => ({ adopted: [], pruned: [], live: [], warnings: [errorText(e)] }));
  if (ctx.hasUI) {
    for (const w of report.warnings) ctx.ui.notify(printable(w), "warning");
    const said = reattachText(report);
    if (said) ctx.ui.notify(said, "info");
    if (report.live.length > 0) ports.widget.touch(ctx);
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
    deliver: (push) => ports.pi.sendMessage(pushMessage(push), { triggerTurn: true, deliverAs: "followUp" }),
    notice: (n) => {
      if (!ctx.hasUI) return;
      // A sheep's own words: never an escape sequence on the person's terminal.
      ctx.ui.notify(printable(noticeText(n)), "info");
      ports.widget.touch(ctx);
    },
    // A person's prompt's questions and finish: in the transcript, where /shepherd's answers stand.
    ...(ctx.hasUI ? { person: (n: PersonNote) => ports.transcript(ctx, personNoteText(n)) } : {}),
    // A flood of one sheep's messages held back by the rate limit: one line, not one per message.
    held: (h) => {
      if (ctx.hasUI) ctx.ui.notify(printable(heldText(h.label, h.count)), "info");
    },
  });
  // The notices of the `notify` setting: pi's own notification for the terminal channel, never raw escapes.
  if (ctx.hasUI) current.notify.sinks.terminal = (n) => ctx.ui.notify(printable(`${n.title}\n${n.text}`), "info");
  const { panel } = ports;
  current.notify.sinks.browser = (n) => panel.notice?.(n) ?? false;
  current.notify.sinks.link = () => panel.link?.();
  current.notify.notifier.start();
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
    ports.widget.touch(ctx);
  }
}
