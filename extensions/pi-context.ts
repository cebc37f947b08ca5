/**
 * What the shepherd reads from pi's context in one place: pi's trust answer (pi 1.6 has
 * ctx.isProjectTrusted(), older pi does not), pi-shepherd's trust rule on top of it, and the trust
 * object the tool and /shepherd both hand to dispatch.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ShepherdApp } from "../src/compose.ts";
import { projectTrust, type ProjectTrust } from "../src/project-trust.ts";
import { agentDirOf } from "../src/settings.ts";
import type { DispatchContext } from "../src/context/context.ts";

/** pi's own answer on the project's trust; undefined on a pi that has none. */
export function piTrusts(ctx: ExtensionContext): boolean | undefined {
  const ask = (ctx as { isProjectTrusted?: () => boolean }).isProjectTrusted;
  return typeof ask === "function" ? ask.call(ctx) === true : undefined;
}

/** pi-shepherd's trust rule for the project of this context, asked afresh (the person may decide in between). */
export function trustOfProject(ctx: ExtensionContext, agentDir: string = agentDirOf(process.env)): ProjectTrust {
  const pi = piTrusts(ctx);
  return projectTrust({ agentDir, cwd: ctx.cwd, ...(pi === undefined ? {} : { pi }) });
}

/** Whether the project's files apply: what every edge (tool, /shepherd, completions, doctor, settings) asks. */
export function projectTrusted(ctx: ExtensionContext, agentDir?: string): boolean {
  return trustOfProject(ctx, agentDir).trusted;
}

/** What every call into dispatch needs from the app and pi; callers add a signal and progress. */
export function dispatchContext(app: ShepherdApp, ctx: ExtensionContext): DispatchContext {
  return {
    shepherd: app.shepherd,
    settings: app.loaded.settings,
    cwd: ctx.cwd,
    agentDir: app.agentDir,
    bundledDir: app.bundledDir,
    hosts: app.hosts,
    trust: trustOf(ctx, app.agentDir),
  };
}

export function trustOf(ctx: ExtensionContext, agentDir?: string): DispatchContext["trust"] {
  return {
    hasUI: ctx.hasUI,
    confirm: (title: string, message: string) => ctx.ui.confirm(title, message),
    isProjectTrusted: () => projectTrusted(ctx, agentDir),
  };
}
