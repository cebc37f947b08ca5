/** What only /shepherd shows: help, settings and screens. Facts about sheep are worded in src/tool/format.ts. */
import { SETTING_KEYS, USER_ONLY, type LoadedSettings } from "../settings.js";
import type { WorktreeSteps } from "../tool/format.js";
import { SUBCOMMANDS } from "./parse.js";
import { quoteWord } from "./tokens.js";

/** The next steps for a kept worktree, as a person types them. */
export function commandWorktreeSteps(name: string): WorktreeSteps {
  return { land: `/shepherd land ${quoteWord(name)}`, remove: `/shepherd close ${quoteWord(name)} --remove-worktree` };
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
