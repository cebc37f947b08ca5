import { discoverAgents, UNTRUSTED, type AgentScope, type Discovery } from "../definitions/discover.ts";
import { ShepherdError } from "../domain/errors.ts";
import type { AgentDefinition } from "../ports/types.ts";
import type { DispatchContext } from "./context.ts";
import { UNTRUSTED_HINT } from "../settings.ts";
import { withModelAlias } from "./models.ts";
import { approveDefinition, type TrustContext } from "./trust.ts";

/**
 * Discovery as this call's context allows it: asked fresh on every call, since the person may
 * trust the project in between. Unless pi-shepherd's trust rule says the project is trusted, its
 * agent directories are never read, only reported.
 */
export function discoverFor(ctx: DispatchContext, scope: AgentScope): Promise<Discovery> {
  return discoverAgents({
    cwd: ctx.cwd,
    scope,
    agentDir: ctx.agentDir,
    bundledDir: ctx.bundledDir,
    projectTrusted: ctx.trust.isProjectTrusted?.() === true,
  });
}

/** The trust rules of this call: pi's answers and UI, and the user's own settings. */
export function trustFor(ctx: DispatchContext): TrustContext {
  return { ...ctx.trust, allowWithoutUI: ctx.settings.allowProjectAgentsWithoutUI, userConfirms: ctx.settings.confirmProjectAgents };
}

/**
 * Definitions for one call, read fresh from disk. Each named definition must exist and pass the
 * trust rules before anything is started; a file approved once in the call is not asked again.
 * Its `model:` comes back resolved through the user's aliases.
 */
export async function definitionPicker(ctx: DispatchContext, scope: AgentScope, confirm: boolean) {
  const found = await discoverFor(ctx, scope);
  const unread = found.skipped.filter((s) => s.reason === UNTRUSTED).map((s) => s.path);
  const approved = new Set<string>();
  return async (name: string): Promise<AgentDefinition> => {
    const definition = found.agents.find((a) => a.name === name);
    if (!definition) {
      const names = found.agents.map((a) => `${a.name} (${a.source})`).join(", ") || "none";
      if (unread.length) {
        throw new ShepherdError(
          "project_agent_refused",
          `no agent definition named "${name}" outside the project, and the project's agents (${unread.join(", ")}) were not read: pi-shepherd does not trust this project (${UNTRUSTED_HINT}). Available: ${names}.`,
        );
      }
      throw new ShepherdError("unknown_definition", `no agent definition named "${name}" in scope "${scope}". Available: ${names}.`);
    }
    if (!approved.has(definition.path)) {
      await approveDefinition(definition, confirm, trustFor(ctx));
      approved.add(definition.path);
    }
    return withModelAlias(definition, ctx.settings.models);
  };
}

/**
 * What the warm pool may boot without asking anyone: the user's and the bundled definitions,
 * never a project's (those run only after the person confirms them), with their models resolved
 * as a start resolves them, so a warm sheep matches the start that would have booted it.
 */
export async function poolDefinitions(o: { cwd: string; agentDir: string; bundledDir: string; models: Record<string, string> }): Promise<AgentDefinition[]> {
  const found = await discoverAgents({ cwd: o.cwd, scope: "user", agentDir: o.agentDir, bundledDir: o.bundledDir });
  return found.agents.map((d) => withModelAlias(d, o.models));
}
