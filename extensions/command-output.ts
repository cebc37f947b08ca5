/**
 * Where /shepherd's answers go. pi's TUI replaces one info notification with the next, so there
 * they become display-only entries of the session (never sent to the model) that stay in the
 * transcript and are drawn again on resume. Elsewhere (RPC, and a pi without entry renderers)
 * they are notifications; without any UI they go to the console.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
// The @mariozechner name is aliased by every pi, old and new, to its own pi-tui.
import { Text } from "@mariozechner/pi-tui";
import { OUTPUT_ENTRY, outputEntry, outputEntryOf, outputRoute, outputText } from "../src/command/output.ts";
import { notifyOutput, type ShowOutput } from "./shepherd-command.ts";

type Theme = { fg(color: string, text: string): string; bold(text: string): string };
type EntryRenderer = (entry: { data?: unknown }, options: { expanded: boolean }, theme: Theme) => unknown;

export function commandOutput(pi: ExtensionAPI): ShowOutput {
  // Entry renderers came with pi 1.6's line; an older pi shows notifications as it always did.
  const register = (pi as { registerEntryRenderer?: (customType: string, renderer: EntryRenderer) => void }).registerEntryRenderer;
  if (typeof register !== "function") return notifyOutput;
  register.call(pi, OUTPUT_ENTRY, (entry, { expanded }, theme) => {
    const data = outputEntryOf(entry.data);
    return data ? new Text(outputText(data, expanded, { fg: (c, s) => theme.fg(c, s), bold: (s) => theme.bold(s) }), 1, 0) : undefined;
  });
  return (ctx, args, notices) => {
    const mode = (ctx as { mode?: string }).mode;
    if (outputRoute({ entryRenderers: true }, { hasUI: ctx.hasUI, ...(mode ? { mode } : {}) }) === "entry")
      pi.appendEntry(OUTPUT_ENTRY, outputEntry(args, notices));
    else notifyOutput(ctx, args, notices);
  };
}
