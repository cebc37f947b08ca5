import { textOf } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import type { AgentScope } from "../definitions/discover.ts";
import { defined, optionalEnum } from "./checks.ts";
import { result } from "./result.ts";
import { discoverFor } from "../context/definition-picker.ts";
import { sheepText } from "../texts/format.ts";

const SCOPES = ["user", "project", "both"] as const;

export type SheepCommand = { action: "sheep"; agentScope?: AgentScope };

/** Lists agent definitions, not running sheep (that is "herd"); the name is the contract's. */
export const sheep = defineAction({
  name: "sheep",
  described: "sheep (list agent definitions)",
  fields: fieldsOf("agentScope"),
  commands: [
    {
      name: "sheep",
      aliases: ["agents"],
      usage: "sheep [user|project|both]",
      summary: "agent definitions, and files skipped with the reason",
      words: { min: 0, max: 1, what: "" },
      params: ([agentScope]) => ({ action: "sheep", ...(agentScope !== undefined ? { agentScope } : {}) }),
      first: "scope",
      answer: async (run) => {
        const r = await run();
        const skipped = (r.details.skipped as unknown[] | undefined)?.length ?? 0;
        return [{ level: skipped ? "warning" : "info", text: `Agent definitions (scope ${String(r.details.scope)}):\n${textOf(r)}` }];
      },
    },
  ],
  parse: (p): SheepCommand => defined<SheepCommand>({ action: "sheep", agentScope: optionalEnum(p, "agentScope", SCOPES) }),
  run: async (cmd, ctx) => {
    const scope = cmd.agentScope ?? ctx.settings.agentScope;
    const found = await discoverFor(ctx, scope);
    const agents = found.agents.map((a) => ({
      name: a.name,
      description: a.description,
      source: a.source,
      path: a.path,
      ...(a.model ? { model: a.model } : {}),
      ...(a.tools ? { tools: a.tools } : {}),
    }));
    return result("sheep", sheepText(found.agents, found.skipped), { agents, skipped: found.skipped, scope });
  },
});
