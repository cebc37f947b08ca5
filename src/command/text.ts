/** What /shepherd shows a person: the same facts as the tool's results, worded for the UI. */
import type { AgentStatus, CloseOutcome, StartedAgent } from "../core/types.js";
import { oneLine } from "../core/labels.js";
import type { AuditEvent } from "../ports/audit.js";
import { ageText } from "../tool/format.js";
import { SETTING_KEYS, USER_ONLY, type LoadedSettings } from "../settings.js";
import { SUBCOMMANDS } from "./parse.js";

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
  const how = a.resumedFrom ? `Resumed "${a.label}" (${a.agent}) from ${a.resumedFrom}, its conversation kept,` : `Started "${a.label}" (${a.agent})`;
  const lines = [`${how} as ${a.agentId} in ${a.runtime} pane ${a.paneId}, cwd ${a.cwd}; it is idle.`];
  if (a.attachHint) lines.push(`Watch it: ${a.attachHint}`);
  return lines.join("\n");
}

export function closeNotice(c: CloseOutcome, label: string | undefined): string {
  const who = label ? `${label} (${c.agentId})` : c.agentId;
  if (c.alreadyClosed) return `${who} was already closed.`;
  const cancelled = c.cancelledPromptIds.length ? ` Cancelled its pending prompt ${c.cancelledPromptIds.join(", ")}.` : "";
  return `Closed ${who}; its session file is kept.${cancelled}`;
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

/** A line of the log is file content someone may have forged: shown as one plain line. */
const shown = oneLine;

function eventLine(e: AuditEvent): string {
  const who = e.agentId ? ` ${e.label ? `${shown(e.label)} (${shown(e.agentId)})` : shown(e.agentId)}` : "";
  const prompt = e.promptId ? ` ${shown(e.promptId)}` : "";
  let what = "";
  switch (e.event) {
    case "start":
      what = ` ${shown(e.agent ?? "?")} on ${shown(e.runtime ?? "?")} pane ${shown(e.paneId ?? "?")}${e.model ? `, model ${shown(e.model)}` : ""}${e.resumedFrom ? `, resuming ${shown(e.resumedFrom)}` : ""}`;
      break;
    case "prompt":
      what = ` ${e.bytes ?? "?"} bytes`;
      break;
    case "result": {
      const dur = typeof e.durationMs === "number" ? ` in ${(e.durationMs / 1000).toFixed(1)}s` : "";
      const tokens = e.usage && typeof e.usage === "object" ? ` ↑${Number(e.usage.input ?? 0)} ↓${Number(e.usage.output ?? 0)}` : "";
      what = ` ${shown(e.status ?? "?")}${dur}${tokens}${e.error ? `: ${shown(e.error)}` : ""}`;
      break;
    }
    case "close":
      what = Array.isArray(e.cancelledPromptIds) && e.cancelledPromptIds.length ? `, cancelled ${e.cancelledPromptIds.map(shown).join(", ")}` : "";
      break;
    case "adopt":
      what = e.from ? ` from shepherd ${shown(e.from)}` : "";
      break;
    case "refusal":
    case "failure":
      what = ` ${shown(e.action ?? "")} [${shown(e.reason ?? "?")}]${e.error ? ` ${shown(e.error)}` : ""}`;
      break;
  }
  return `${shown(e.time).slice(0, 19).replace("T", " ")}  ${e.event.padEnd(7)}${who}${prompt}${what}`;
}

export function logNotice(events: AuditEvent[], agent?: string): string {
  const whose = agent !== undefined ? ` of ${shown(agent)}` : "";
  if (events.length === 0) return `No audit events${whose} yet.`;
  return [`Audit log${whose}, last ${events.length} (UTC):`, ...events.map((e) => `  ${eventLine(e)}`)].join("\n");
}
