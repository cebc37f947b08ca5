import { discoverAgents, type AgentScope } from "../agents/discover.js";
import { ShepherdError } from "../core/errors.js";
import type { AgentDefinition } from "../core/types.js";
import type { DispatchContext } from "./dispatch.js";
import { approveDefinition } from "./trust.js";

/**
 * Definitions for one call, read fresh from disk. Each named definition must exist and pass the
 * trust rules before anything is started; a file approved once in the call is not asked again.
 */
export async function definitionPicker(ctx: DispatchContext, scope: AgentScope, confirm: boolean) {
  const found = await discoverAgents({ cwd: ctx.cwd, scope, agentDir: ctx.agentDir, bundledDir: ctx.bundledDir });
  const approved = new Set<string>();
  return async (name: string): Promise<AgentDefinition> => {
    const definition = found.agents.find((a) => a.name === name);
    if (!definition) {
      const names = found.agents.map((a) => `${a.name} (${a.source})`).join(", ") || "none";
      throw new ShepherdError("unknown_definition", `no agent definition named "${name}" in scope "${scope}". Available: ${names}.`);
    }
    if (!approved.has(definition.path)) {
      await approveDefinition(definition, confirm, {
        ...ctx.trust,
        allowWithoutUI: ctx.settings.allowProjectAgentsWithoutUI,
        userConfirms: ctx.settings.confirmProjectAgents,
      });
      approved.add(definition.path);
    }
    return definition;
  };
}
