/** What only /shepherd shows: help, settings and screens. Facts about sheep are worded in src/texts/format.ts. */
import { oneLine } from "../domain/labels.ts";
import type { AuditEvent } from "../ports/audit.ts";
import { SETTING_KEYS, type Settings, USER_ONLY, type LoadedSettings } from "../settings.ts";
import type { WaitProgress } from "../core/shepherd.ts";
import { sheepName } from "../texts/widget.ts";
import { SUBCOMMANDS } from "./parse.ts";

export { COMMAND_WAIT_STEPS, commandBusyText, commandReplyHowTo, commandWorktreeSteps } from "../actions/command-steps.ts";

/** The few subcommands most used, for `/shepherd` with no argument: what a person needs first, and where the rest is. */
const FIRST_STEPS: readonly [usage: string, what: string][] = [
  ["start <agent> [--label L]", "a new sheep in a pane of its own"],
  ["prompt <id|label> <text…>", "a task (--steer or --follow-up while it works)"],
  ["wait [<id|label>]", "its answer"],
  ["read <id|label>", "what it said and did"],
  ["close <id|label>", "end it"],
  ["panel on", "the herd in your browser"],
];

/** The short help under the herd: at most ten lines, and the way to the whole help. */
export function shortHelpText(): string {
  const width = Math.max(...FIRST_STEPS.map(([u]) => u.length));
  return [
    "/shepherd <subcommand>; the most used:",
    ...FIRST_STEPS.map(([usage, what]) => `  ${usage.padEnd(width)}  ${what}`),
    "Every subcommand and flag: /shepherd help",
  ].join("\n");
}

/** `waiting 0/2: alpha · working, beta · idle`: one line while /shepherd wait runs. */
export function waitProgressText(p: WaitProgress): string {
  const items = p.items.map((i) => `${oneLine(sheepName(i.label, i.agent) || i.promptId)} · ${i.state}`);
  return `waiting ${p.done}/${p.total}: ${items.join(", ")}`;
}

export function helpText(): string {
  return [
    "/shepherd <subcommand> (no argument: the herd and the few most used)",
    ...SUBCOMMANDS.map((s) => `  ${s.usage} — ${s.summary}${s.aliases ? ` (alias: ${s.aliases.join(", ")})` : ""}`),
  ].join("\n");
}

/** `presentNow`: the settings files there now, which may have come after they were read. */
export function settingsNotice(
  loaded: LoadedSettings,
  runtime?: string,
  presentNow?: readonly string[],
  overrides: Partial<Record<keyof Settings, string>> = {},
): string {
  const { settings, origins, paths, files, problems } = loaded;
  const lines = ["Settings in effect:"];
  for (const key of SETTING_KEYS) {
    const value = settings[key];
    const origin = origins[key];
    const shown = value === undefined ? "(the shepherd's own node and pi)" : JSON.stringify(value);
    // An environment variable that rules over the setting is said on its line: which one wins.
    const over = overrides[key] ? `; ${overrides[key]} overrides it, and wins` : "";
    lines.push(`  ${key}: ${shown}${origin === "default" ? ` (default${over})` : ` (${origin}${over})`}${USER_ONLY.has(key) ? " [user-only]" : ""}`);
  }
  if (runtime) lines.push(`Runtime in use: ${runtime}`);
  const state = (p: string) => {
    const n = problems.filter((x) => x.startsWith(`${p}:`)).length;
    const base = files.includes(p)
      ? "read"
      : n
        ? "not used"
        : presentNow?.includes(p)
          ? "not read: it came after the settings were read; /reload reads it"
          : "not present";
    return n ? `${base}, ${n} problem${n > 1 ? "s" : ""}` : base;
  };
  lines.push("Files:", `  user: ${paths.user} (${state(paths.user)})`, `  project: ${paths.project} (${state(paths.project)})`);
  if (problems.length) lines.push("Problems:", ...problems.map((p) => `  - ${p}`));
  else lines.push("No problems.");
  lines.push("Settings are read when pi starts; after editing a file, /reload.");
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
      what = ` ${shown(e.agent ?? "?")} on ${shown(e.runtime ?? "?")} pane ${shown(e.paneId ?? "?")}${e.model ? `, model ${shown(e.model)}` : ""}${e.resumedFrom ? `, resuming ${shown(e.resumedFrom)}` : ""}${e.warm === true ? " (warm pool)" : ""}`;
      break;
    case "take":
      what = ` ${shown(e.agent ?? "?")} from the warm pool`;
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
    case "steer":
      what = ` ${shown(e.steerId ?? "?")}, ${e.bytes ?? "?"} bytes`;
      break;
    case "reply":
      what = ` to ${shown(e.messageId ?? "?")}, ${e.bytes ?? "?"} bytes`;
      break;
    case "land":
      what =
        e.landed === false
          ? ` ${shown(e.branch ?? "?")}: ${shown(e.into ?? "?")} held it all already`
          : ` ${shown(e.branch ?? "?")} into ${shown(e.into ?? "?")}${e.squash ? " (squashed)" : ""}${e.commit ? ` as ${shown(e.commit.slice(0, 12))}` : ""}, ${e.fileCount ?? "?"} files`;
      break;
    case "sync":
      what = ` ${shown(e.commit?.slice(0, 12) ?? "?")} into ${shown(e.branch ?? "?")}, ${e.fileCount ?? "?"} files`;
      break;
    case "prune":
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
  const from = typeof e.edge === "string" ? ` · ${EDGE_WORDS[e.edge] ?? shown(e.edge)}` : "";
  return `${shown(e.time).slice(0, 19).replace("T", " ")}  ${e.event.padEnd(7)}${who}${prompt}${what}${from}`;
}

/** Where an event came from, as the log says it. */
const EDGE_WORDS: Readonly<Record<string, string>> = {
  tool: "by the model (tool)",
  command: "by you (/shepherd)",
  panel: "in the panel",
  api: "by the API (token)",
  shepherd: "by the shepherd itself",
};

export function logNotice(events: AuditEvent[], agent?: string): string {
  const whose = agent !== undefined ? ` of ${shown(agent)}` : "";
  if (events.length === 0) return `No audit events${whose} yet.`;
  return [`Audit log${whose}, last ${events.length} (UTC):`, ...events.map((e) => `  ${eventLine(e)}`)].join("\n");
}
