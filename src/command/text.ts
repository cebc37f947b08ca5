/** What /shepherd shows a person: the same facts as the tool's results, worded for the UI. */
import type { AgentStatus, CloseOutcome, StartedAgent } from "../core/types.js";
import { ageText, closedWorktreeText } from "../tool/format.js";
import { SETTING_KEYS, USER_ONLY, type LoadedSettings } from "../settings.js";
import { SUBCOMMANDS } from "./parse.js";
import { quoteWord } from "./tokens.js";

function sheepLine(s: AgentStatus, now: number): string {
  const age = ageText(now - Date.parse(s.createdAt));
  const active = s.activePromptId ? `, working on ${s.activePromptId}` : "";
  const pane = s.paneAlive ? "" : ", pane gone";
  return `${s.label} (${s.agentId}, ${s.agent}): ${s.state}${active}${pane} · ${s.runtime} · ${age} old`;
}

export function herdNotice(list: AgentStatus[], now: number): string {
  if (list.length === 0) return "No live sheep. Start one with /shepherd start <agent> (/shepherd sheep lists agents).";
  return [`Herd (${list.length}):`, ...list.map((s) => `  ${sheepLine(s, now)}`)].join("\n");
}

export function statusNotice(s: AgentStatus, now: number): string {
  if (s.state === "closed") return `${s.label} (${s.agentId}, ${s.agent}): closed.`;
  const rt = s.runtimeStatus ? ` (${s.runtime} says ${s.runtimeStatus})` : "";
  return sheepLine(s, now) + rt;
}

export function startNotice(a: StartedAgent): string {
  const lines = [`Started "${a.label}" (${a.agent}) as ${a.agentId} in ${a.runtime} pane ${a.paneId}, cwd ${a.cwd}; it is idle.`];
  if (a.attachHint) lines.push(`Watch it: ${a.attachHint}`);
  return lines.join("\n");
}

export function closeNotice(c: CloseOutcome, label: string | undefined): string {
  const who = label ? `${label} (${c.agentId})` : c.agentId;
  const name = label ?? c.agentId;
  const worktree = closedWorktreeText(c, { land: `/shepherd land ${quoteWord(name)}`, remove: `/shepherd close ${quoteWord(name)} --remove-worktree` });
  if (c.alreadyClosed) return `${who} was already closed.${worktree}`;
  const cancelled = c.cancelledPromptIds.length ? ` Cancelled its pending prompt ${c.cancelledPromptIds.join(", ")}.` : "";
  return `Closed ${who}; its session file is kept.${cancelled}${worktree}`;
}

export function readNotice(label: string | undefined, agentId: string, text: string): string {
  const who = label ? `${label} (${agentId})` : agentId;
  return `Screen of ${who}:\n${text.trimEnd() || "(the pane shows no text)"}`;
}

export function helpText(): string {
  return [
    "/shepherd <subcommand> (no argument: the herd and this help)",
    ...SUBCOMMANDS.map((s) => `  ${s.usage} — ${s.summary}${s.aliases ? ` (alias: ${s.aliases.join(", ")})` : ""}`),
  ].join("\n");
}

export function settingsNotice(loaded: LoadedSettings, runtime?: string): string {
  const { settings, origins, paths, files, problems } = loaded;
  const lines = ["Settings in effect:"];
  for (const key of SETTING_KEYS) {
    const value = settings[key];
    const origin = origins[key];
    const shown = value === undefined ? "(the shepherd's own node and pi)" : JSON.stringify(value);
    lines.push(`  ${key}: ${shown}${origin === "default" ? " (default)" : ` (${origin})`}${USER_ONLY.has(key) ? " [user-only]" : ""}`);
  }
  if (runtime) lines.push(`Runtime in use: ${runtime}`);
  const state = (p: string) => {
    const n = problems.filter((x) => x.startsWith(`${p}:`)).length;
    const base = files.includes(p) ? "read" : n ? "not used" : "not present";
    return n ? `${base}, ${n} problem${n > 1 ? "s" : ""}` : base;
  };
  lines.push("Files:", `  user: ${paths.user} (${state(paths.user)})`, `  project: ${paths.project} (${state(paths.project)})`);
  if (problems.length) lines.push("Problems:", ...problems.map((p) => `  - ${p}`));
  else lines.push("No problems.");
  return lines.join("\n");
}
