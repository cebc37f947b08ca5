/** pi-tui wrappers around the text renderers in src/edge/render-text.ts. */
// The @mariozechner name is aliased by every pi, old and new, to its own pi-tui.
import { Text } from "@mariozechner/pi-tui";
import type { Push } from "../src/core/async/courier.ts";
import type { SheepView } from "../src/ports/types.ts";
import { renderCallText, renderPushText, renderResultText, type Paint } from "../src/edge/render-text.ts";
import { type FrameClock, LiveText } from "./live-text.ts";

type Theme = { fg(color: string, text: string): string; bold(text: string): string };

const paint = (theme: Theme): Paint => ({ fg: (c, s) => theme.fg(c, s), bold: (s) => theme.bold(s) });

/** What progress is drawn from besides the call's own reports: the live herd and the frame's clock. */
export interface LiveSource {
  clock: FrameClock;
  view(agentId: string): SheepView | undefined;
}

export function renderCall(args: unknown, theme: Theme, context?: { expanded?: boolean }) {
  return new Text(renderCallText((args ?? {}) as Record<string, unknown>, paint(theme), context?.expanded === true), 0, 0);
}

export function renderResult(
  result: { content?: { type: string; text?: string }[]; details?: unknown },
  options: { expanded: boolean; isPartial: boolean },
  theme: Theme,
  context: { isError?: boolean; args?: unknown } | undefined,
  live: LiveSource,
) {
  const details = (result.details ?? {}) as Record<string, unknown>;
  const lines = Number((context?.args as { lines?: unknown } | undefined)?.lines);
  const draw = () =>
    renderResultText(
      { ...(result.content ? { content: result.content } : {}), details },
      {
        expanded: options.expanded,
        isPartial: options.isPartial,
        isError: context?.isError === true,
        now: live.clock.now(),
        live: (id) => live.view(id),
        ...(Number.isInteger(lines) && lines > 0 ? { lines } : {}),
      },
      paint(theme),
    );
  // Progress follows the herd between two reports, ticking with the widget; a result is fixed.
  return options.isPartial && details.progress ? new LiveText(draw) : new Text(draw(), 0, 0);
}

/** A pushed result, question or delegation in the transcript. */
export function renderPush(message: { content: unknown; details?: unknown }, options: { expanded: boolean }, theme: Theme) {
  const content =
    typeof message.content === "string"
      ? message.content
      : Array.isArray(message.content)
        ? message.content.map((c: { text?: string }) => c.text ?? "").join("")
        : "";
  return new Text(renderPushText(content, message.details as Push | undefined, options.expanded, paint(theme)), 0, 0);
}
