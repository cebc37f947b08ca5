/**
 * The shepherd itself, loaded by the entry (extensions/shepherd.ts) only in a pi that may
 * shepherd: registers the `shepherd` tool, the /shepherd command, the widget and pi's session
 * events, forwarded to the session's lifecycle (src/session/shepherd-session.ts).
 */
import type { Static } from "@sinclair/typebox";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { TOOL_GUIDELINES, TOOL_SNIPPET, toolDescription } from "../src/edge/description.ts";
import { prepareArguments } from "../src/edge/params.ts";
import { ShepherdSession } from "../src/session/shepherd-session.ts";
import { shepherdParameters } from "../src/edge/schema.ts";
import { throttle } from "../src/edge/throttle.ts";
import { commandOutput } from "./command-output.ts";
import { HerdWidget } from "./herd-widget.ts";
import { FrameClock } from "./live-text.ts";
import { parts } from "./lazy-parts.ts";
import { dispatchContext, projectTrusted as projectTrustedOf } from "./pi-context.ts";
import { PUSH_TYPE } from "../src/edge/push-type.ts";
import { renderCall, renderPush, renderResult } from "./render.ts";
import { PanelGlue } from "./panel.ts";
import { registerShepherdCommand } from "./shepherd-command.ts";

export function shepherdExtension(pi: ExtensionAPI): void {
  // One clock reading per drawn frame for the widget and every progress view alike.
  const clock = new FrameClock();
  const widget = new HerdWidget(() => session.ready?.shepherd, clock);
  const live = { clock, view: (agentId: string) => session.ready?.shepherd.view(agentId) };
  const show = commandOutput(pi);
  const session: ShepherdSession<ExtensionContext> = new ShepherdSession<ExtensionContext>({
    pi,
    parts,
    dispatchContext,
    projectTrusted: (ctx) => projectTrustedOf(ctx),
    transcript: (ctx, text) => show(ctx, "", [{ level: "info", text }]),
    widget,
    panel: {
      resume: (ctx) => panel.resume(ctx),
      shutdown: (reason) => panel.shutdown(reason),
      notice: (n) => panel.notice(n),
      link: () => panel.link(),
    },
    env: process.env,
    stderr: (line) => console.error(line),
  });

  // The model's `shepherd` call as it streams: sheep it will start boot before it ends.
  pi.on("message_update", (event) => {
    const e = event.assistantMessageEvent;
    if (e?.type === "toolcall_end") {
      if (e.toolCall?.name === "shepherd") session.streaming(e.toolCall.id, "ended");
      return;
    }
    if (e?.type !== "toolcall_delta") return;
    const call = e.partial?.content?.[e.contentIndex];
    if (call?.type !== "toolCall" || call.name !== "shepherd" || typeof e.delta !== "string") return;
    session.streaming(call.id, { delta: e.delta, args: call.arguments });
  });

  pi.registerTool({
    name: "shepherd",
    label: "Shepherd",
    description: toolDescription(),
    promptSnippet: TOOL_SNIPPET,
    promptGuidelines: [...TOOL_GUIDELINES],
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
            session.entry(ctx, {
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
  const panel = new PanelGlue({
    entry: (ctx) => session.entry(ctx),
    settings: async (ctx) => (await session.appFor(ctx)).loaded.settings,
    tell: (ctx, text) => {
      if (ctx.hasUI) show(ctx, "", [{ level: "info", text }]);
    },
  });
  registerShepherdCommand(pi, {
    appFor: (ctx) => session.appFor(ctx),
    current: () => session.current(),
    entry: (ctx, extra) => session.entry(ctx, extra),
    panel: (ctx, mode) => panel.command(ctx, mode),
    onChange: (ctx) => widget.touch(ctx),
    show,
  });
  pi.registerMessageRenderer(PUSH_TYPE, (message, options, theme) => renderPush(message, options, theme));

  // After /reload (or in a new shepherd on the same agent dir) the sheep still run: the session
  // takes them back. Not awaited: pi's start does not wait for the shepherd's parts to load.
  pi.on("session_start", (_event, ctx) => {
    void session.sessionStart(ctx);
  });
  pi.on("session_shutdown", (event) => session.shutdown(event.reason));
}
