/**
 * Where /shepherd's answers go. pi's TUI replaces one info notification with the next, so there
 * they become display-only entries of the session (never sent to the model) that stay in the
 * transcript and are drawn again on resume. Elsewhere (RPC, and a pi without entry renderers)
 * they are notifications; without any UI they go to the console.
 *
 * An answer holding a secret (the panel's URL with its token) is kept in the session file without
 * it; the whole text is held in this pi's memory and drawn once, and any later drawing of the
 * entry (Ctrl+O, a resize that redraws, a reload, a resume) shows it redacted.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
// The @mariozechner name is aliased by every pi, old and new, to its own pi-tui.
import { Text } from "@mariozechner/pi-tui";
import { randomBytes } from "node:crypto";
import { OUTPUT_ENTRY, type OutputEntry, outputEntry, outputEntryOf, outputRoute, outputText } from "../src/command/output.ts";
import { notifyOutput, type ShowOutput } from "./shepherd-command.ts";

type Theme = { fg(color: string, text: string): string; bold(text: string): string };
type EntryRenderer = (entry: { data?: unknown }, options: { expanded: boolean }, theme: Theme) => unknown;

/** Whole answers not yet drawn, by their entry's `reveal`; a few at most (one per /shepherd panel typed). */
const MAX_UNDRAWN = 8;

export function commandOutput(pi: ExtensionAPI): ShowOutput {
  // Entry renderers came with pi 1.6's line; an older pi shows notifications as it always did.
  const register = (pi as { registerEntryRenderer?: (customType: string, renderer: EntryRenderer) => void }).registerEntryRenderer;
  if (typeof register !== "function") return notifyOutput;
  // Per load of the extension: a reload holds none, so what it draws again is redacted.
  const undrawn = new Map<string, OutputEntry>();
  register.call(pi, OUTPUT_ENTRY, (entry, { expanded }, theme) => {
    const data = outputEntryOf(entry.data);
    if (!data) return undefined;
    const whole = data.reveal === undefined ? undefined : undrawn.get(data.reveal);
    const text = new Text(outputText(whole ?? data, expanded, { fg: (c, s) => theme.fg(c, s), bold: (s) => theme.bold(s) }), 1, 0);
    if (whole && data.reveal !== undefined) {
      // pi may build the entry's component more than once before a frame: the first one drawn ends the secret.
      const reveal = data.reveal;
      const render = text.render.bind(text);
      text.render = (width: number) => {
        undrawn.delete(reveal);
        return render(width);
      };
    }
    return text;
  });
  return (ctx, args, notices) => {
    const mode = (ctx as { mode?: string }).mode;
    if (outputRoute({ entryRenderers: true }, { hasUI: ctx.hasUI, ...(mode ? { mode } : {}) }) !== "entry") return notifyOutput(ctx, args, notices);
    const kept = outputEntry(args, notices);
    const whole = outputEntry(args, notices, true);
    if (JSON.stringify(kept) !== JSON.stringify(whole)) {
      kept.reveal = randomBytes(16).toString("hex");
      undrawn.set(kept.reveal, whole);
      for (const old of undrawn.keys()) if (undrawn.size > MAX_UNDRAWN) undrawn.delete(old);
    }
    pi.appendEntry(OUTPUT_ENTRY, kept);
  };
}
