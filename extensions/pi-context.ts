/**
 * What the shepherd reads from pi's context in one place: pi 1.6 has ctx.isProjectTrusted(),
 * older pi does not, and the trust object the tool and /shepherd both hand to dispatch.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ShepherdApp } from "../src/compose.ts";
import type { DispatchContext } from "../src/tool/dispatch.ts";

/** pi's own trust question, bound to its context; undefined on a pi that has none. */
function trustQuestion(ctx: ExtensionContext): (() => boolean) | undefined {
  const ask = (ctx as { isProjectTrusted?: () => boolean }).isProjectTrusted;
  return typeof ask === "function" ? () => ask.call(ctx) : undefined;
}

/** pi's answer on the project's trust; undefined where this pi cannot say. */
export function projectTrusted(ctx: ExtensionContext): boolean | undefined {
  return trustQuestion(ctx)?.();
}

/** What every call into dispatch needs from the app and pi; callers add a signal and progress. */
export function dispatchContext(app: ShepherdApp, ctx: ExtensionContext): DispatchContext {
  return {
    shepherd: app.shepherd,
    settings: app.loaded.settings,
    cwd: ctx.cwd,
    agentDir: app.agentDir,
    bundledDir: app.bundledDir,
    trust: trustOf(ctx),
  };
}

export function trustOf(ctx: ExtensionContext): DispatchContext["trust"] {
  const isProjectTrusted = trustQuestion(ctx);
  return {
    hasUI: ctx.hasUI,
    confirm: (title: string, message: string) => ctx.ui.confirm(title, message),
    ...(isProjectTrusted ? { isProjectTrusted } : {}),
  };
}
