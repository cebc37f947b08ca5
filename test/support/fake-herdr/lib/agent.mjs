// Agent identity and status. A pane has an agent when something reported one
// (`pane report-agent`) or when its foreground program is `pi`; for the latter the status
// follows herdr's pi screen manifest: `Working...` on screen is working, anything else idle.
import { parseArgs } from "./args.mjs";
import { ApiError, UsageError } from "./errors.mjs";
import { atLeast, since } from "./versions.mjs";
import { agentInfo } from "./records.mjs";

/** @param {any} state @param {ReturnType<import("./tmux.mjs").tmuxClient>} tmux */
export function agentLookup(state, tmux) {
  /** @type {Map<string, string> | undefined} */
  let commands;
  /** @type {Map<string, import("./records.mjs").AgentView | undefined>} */
  const cache = new Map();

  function foreground(/** @type {string} */ tmuxPane) {
    if (!commands) {
      commands = new Map();
      const r = tmux.run(["list-panes", "-a", "-F", "#{pane_id}\t#{pane_current_command}"]);
      if (r.ok) {
        for (const line of r.stdout.split("\n")) {
          const [id, cmd] = line.split("\t");
          if (id) commands.set(id, cmd ?? "");
        }
      }
    }
    return commands.get(tmuxPane) ?? "";
  }

  /** @param {string} paneId */
  function detect(paneId) {
    const p = state.panes[paneId];
    if (!p) return undefined;
    if (p.agent) return { agent: p.agent.agent, status: p.agent.state };
    if (foreground(p.tmux).split("/").pop() !== "pi") return undefined;
    const screen = tmux.run(["capture-pane", "-p", "-t", p.tmux]);
    return { agent: "pi", status: screen.ok && screen.stdout.includes("Working...") ? "working" : "idle" };
  }

  return (/** @type {string} */ paneId) => {
    if (!cache.has(paneId)) cache.set(paneId, detect(paneId));
    return cache.get(paneId);
  };
}

/** @param {any} ctx @param {string[]} args */
export function agentGet(ctx, args) {
  const [target] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  const agent = ctx.state.panes[target] ? ctx.agentOf(target) : undefined;
  if (!agent) throw new ApiError("agent_not_found", `agent not found: ${target}`);
  return { json: { type: "agent_info", agent: agentInfo(ctx.state, target, agent) } };
}

/** @param {any} ctx @param {string[]} args */
export function agentList(ctx, args) {
  parseArgs(args, {});
  const agents = [];
  for (const id of Object.keys(ctx.state.panes)) {
    const agent = ctx.agentOf(id);
    if (agent) agents.push(agentInfo(ctx.state, id, agent));
  }
  return { json: { type: "agent_list", agents } };
}

/**
 * `agent prompt <target> <text>` without `--wait` (the fake does not emulate prompt waits; pi-shepherd
 * never prompts through herdr: its prompts travel as files). Check order of
 * `v0.8.2:src/app/api/agents.rs` `handle_agent_prompt`: from 0.8.1 a blocked agent is refused with
 * `agent_blocked` and nothing is typed.
 * @param {any} ctx @param {string[]} args
 */
export function agentPrompt(ctx, args) {
  const { positionals, flags, opts } = parseArgs(args, {
    flags: ["--wait"],
    values: ["--timeout"],
    repeated: ["--until"],
    minPositionals: 2,
    maxPositionals: 2,
  });
  if (!flags.has("--wait") && opts["--timeout"] !== undefined) throw new UsageError("--timeout requires --wait");
  if (flags.has("--wait")) throw new UsageError("the fake herdr does not emulate agent prompt --wait");
  const [target, text] = /** @type {[string, string]} */ (positionals);
  if (text === "") throw new ApiError("empty_agent_prompt", "agent prompt must not be empty");
  const agent = ctx.state.panes[target] ? ctx.agentOf(target) : undefined;
  if (!agent) throw new ApiError("agent_not_found", `agent not found: ${target}`);
  if (agent.status === "blocked" && atLeast(ctx.version, since.agentBlocked)) {
    throw new ApiError("agent_blocked", `agent ${target} is blocked and requires interactive input`);
  }
  const p = ctx.state.panes[target];
  if (!ctx.tmux.run(["send-keys", "-t", p.tmux, "-l", "--", text]).ok || !ctx.tmux.run(["send-keys", "-t", p.tmux, "Enter"]).ok) {
    throw new ApiError("agent_prompt_failed", `could not type into pane ${target}`);
  }
  p.revision += 1;
  return { json: { type: "agent_prompted", agent: agentInfo(ctx.state, target, agent) } };
}
