import type { AgentScope } from "../agents/discover.js";
import { ShepherdError } from "../core/errors.js";
import type { Shepherd, WaitProgress } from "../core/shepherd.js";
import type { Settings } from "../settings.js";
import { resolveCwd } from "./cwd.js";
import { delegateAction } from "./delegate-action.js";
import { closeText, herdText, promptText, sheepText, startText, statusText, waitText } from "./format.js";
import {
  actionOf,
  coerce,
  optionalBoolean,
  optionalEnum,
  optionalNumber,
  optionalString,
  promptIdsOf,
  requireString,
  type Params,
} from "./params.js";
import { definitionPicker, discoverFor } from "./definitions.js";
import type { TrustContext } from "./trust.js";

export interface ToolResult {
  content: { type: "text"; text: string }[];
  details: Record<string, unknown> & { action: string };
}

export interface DispatchContext {
  shepherd: Shepherd;
  settings: Settings;
  cwd: string;
  agentDir: string;
  bundledDir: string;
  trust: Omit<TrustContext, "allowWithoutUI" | "userConfirms">;
  signal?: AbortSignal;
  onProgress?: (text: string, details: Record<string, unknown>) => void;
}

const MAX_TEXT = 50_000;

function result(action: string, text: string, details: Record<string, unknown>): ToolResult {
  // The full text always stays in details; only what the model reads inline is capped.
  const shown = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n[... ${text.length - MAX_TEXT} more characters; the full text is in the result details and the sheep's session file]` : text;
  return { content: [{ type: "text", text: shown }], details: { action, ...details } };
}

function targetAgentId(ctx: DispatchContext, target: string): string {
  const { registry } = ctx.shepherd;
  if (registry.agents.has(target)) return target;
  return registry.liveByLabel(target)?.agentId ?? target; // else the registry gives the precise error
}

export async function dispatch(raw: unknown, ctx: DispatchContext): Promise<ToolResult> {
  const p: Params = coerce(raw);
  const action = actionOf(p);
  const { shepherd, settings } = ctx;
  switch (action) {
    case "start": {
      const name = requireString(p, "agent", action);
      const scope = optionalEnum<AgentScope>(p, "agentScope", ["user", "project", "both"]) ?? settings.agentScope;
      const placement = optionalEnum(p, "placement", ["tab", "pane", "workspace"] as const) ?? settings.placement;
      const direction = optionalEnum(p, "direction", ["right", "down"] as const) ?? settings.direction;
      const cwd = resolveCwd(ctx.cwd, optionalString(p, "cwd"));
      const model = optionalString(p, "model");
      const label = optionalString(p, "label");
      const confirm = optionalBoolean(p, "confirmProjectAgents") ?? true;
      const definition = await (await definitionPicker(ctx, scope, confirm))(name);
      const started = await shepherd.start(
        { definition, cwd, placement, direction, ...(label !== undefined ? { label } : {}), ...(model !== undefined ? { model } : {}) },
        ctx.signal,
      );
      return result(action, startText(started), { agent: started });
    }
    case "prompt": {
      const agentId = requireString(p, "agentId", action);
      const message = p.message;
      if (typeof message !== "string" || message.length === 0) {
        throw new ShepherdError("invalid_params", 'action "prompt" needs "message" (a non-empty string).');
      }
      const submitted = await shepherd.prompt(agentId, message);
      return result(action, promptText(submitted), { prompt: submitted });
    }
    case "wait": {
      const ids = promptIdsOf(p);
      const timeoutSec = optionalNumber(p, "timeout", 0, 7 * 24 * 3600) ?? settings.waitTimeout;
      const labels = () => new Map([...shepherd.registry.agents.values()].map((a) => [a.agentId, a.label]));
      const results = await shepherd.wait(ids, {
        timeoutSec,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        ...(ctx.onProgress ? { onProgress: (pr: WaitProgress) => ctx.onProgress!(`${pr.done}/${pr.total} done`, { action, progress: pr }) } : {}),
      });
      return result(action, waitText(results, labels()), { results });
    }
    case "status": {
      const status = await shepherd.status(requireString(p, "agentId", action));
      return result(action, statusText(status), { status });
    }
    case "close": {
      const closed = await shepherd.close(requireString(p, "agentId", action));
      return result(action, closeText(closed), { closed });
    }
    case "sheep": {
      const scope = optionalEnum<AgentScope>(p, "agentScope", ["user", "project", "both"]) ?? settings.agentScope;
      const found = await discoverFor(ctx, scope);
      const agents = found.agents.map((a) => ({
        name: a.name,
        description: a.description,
        source: a.source,
        path: a.path,
        ...(a.model ? { model: a.model } : {}),
        ...(a.tools ? { tools: a.tools } : {}),
      }));
      return result(action, sheepText(found.agents, found.skipped), { agents, skipped: found.skipped, scope });
    }
    case "herd": {
      const agents = await shepherd.herd();
      if (optionalBoolean(p, "all") !== true) return result(action, herdText(agents), { agents });
      const others = (await shepherd.others()).map((a) => ({ agentId: a.agentId, agent: a.agent, label: a.label, runtime: a.runtime, state: a.state, owner: a.owner, createdAt: a.createdAt }));
      const lines = others.map((o) => `${o.label} (${o.agentId}, agent ${o.agent}): ${o.state}; belongs to shepherd ${o.owner}.`);
      return result(action, [herdText(agents), ...(lines.length ? ["", "Other shepherds' sheep:", ...lines] : [])].join("\n"), { agents, others });
    }
    case "read": {
      const target = requireString(p, "target", action);
      const lines = optionalNumber(p, "lines", 1, 10_000) ?? 40;
      const agentId = targetAgentId(ctx, target);
      const text = await shepherd.read(agentId, lines);
      return result(action, text || "(the pane shows no text)", { agentId, text });
    }
    case "delegate": {
      const { text, details } = await delegateAction(p, ctx);
      return result(action, text, details);
    }
    case "prune": {
      const removed = await shepherd.prune();
      return result(action, removed.length ? `Pruned ${removed.length}: ${removed.join(", ")}.` : "Nothing to prune: every recorded pane is alive.", { removed });
    }
  }
}
