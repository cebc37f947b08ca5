import { type ActionResult, info, type Notice, plainAnswer } from "../actions/notice.ts";
import { errorText, ShepherdError } from "../domain/errors.ts";
import type { AuditEvent } from "../ports/audit.ts";
import type { WaitItem } from "../ports/types.ts";
import type { LoadedSettings, Settings } from "../settings.ts";
import { parseToolCommand, type ToolCommand } from "../edge/command.ts";
import { findSubcommand, parseShepherdCommand, type PanelMode, type ParsedCommand } from "./parse.ts";
import type { WaitProgress } from "../core/shepherd.ts";
import { waitText } from "../texts/format.ts";
import { COMMAND_WAIT_STEPS, helpText, logNotice, settingsNotice, shortHelpText, waitProgressText } from "./text.ts";

export type { ActionResult, Notice } from "../actions/notice.ts";

/** How a long action (a wait) is stopped and followed. */
export interface RunOptions {
  signal?: AbortSignal;
  onProgress?: (text: string, details: Record<string, unknown>) => void;
}

/** A wait in progress as the UI shows it: a signal that stops it (Escape) and a line for its progress. */
export interface Watch {
  signal?: AbortSignal;
  progress(text: string): void;
  end(): void;
}

export interface CommandDeps {
  /** The tool's own execute, bound to this shepherd and this UI: every subcommand runs the same core. */
  execute(command: ToolCommand, o?: RunOptions): Promise<ActionResult>;
  /** The prompts not settled yet of the sheep named (its id or label), or of every live sheep. */
  pending?(target?: string): Promise<string[]>;
  /** Where the UI can show a wait's progress and stop it; without it a wait runs to its end or timeout. */
  watch?(): Watch;
  /** The last events of the audit log, oldest first; with `agent`, of that sheep only. */
  log(o: { limit: number; agent?: string }): Promise<AuditEvent[]>;
  /** The settings in effect (even when no runtime could be set up), and the runtime if there is one. */
  settings(): Promise<{
    loaded: LoadedSettings;
    runtime?: string;
    runtimeError?: string;
    presentNow?: string[];
    /** Environment variables that rule over a setting (settings.ts envOverrides). */
    overrides?: Partial<Record<keyof Settings, string>>;
  }>;
  /** `/shepherd panel`: turns the browser panel on or off, or says its URL; its answer's text. */
  panel?(mode: PanelMode | undefined): Promise<string>;
  /** `/shepherd trust`: shows the project's files, asks the person and records the answer (src/command/trust.ts). */
  trust?(): Promise<Notice[]>;
  now(): number;
}

async function run(cmd: ParsedCommand, deps: CommandDeps): Promise<Notice[]> {
  if ("command" in cmd) {
    // An action's subcommand: its module says what a person sees of the answer (actions/<action>.ts).
    const answer = findSubcommand(cmd.sub)?.answer ?? plainAnswer;
    return answer(
      () => deps.execute(cmd.command),
      cmd.command,
      () => deps.now(),
    );
  }
  switch (cmd.sub) {
    case "help":
      return info(helpText());
    case "panel":
      if (!deps.panel) throw new ShepherdError("invalid_params", "this pi has no panel: it runs only in the shepherd pi itself.");
      return info(await deps.panel(cmd.mode));
    case "trust":
      if (!deps.trust) throw new ShepherdError("trust_refused", "this /shepherd has no way to ask you about trust here.");
      return await deps.trust();
    case "settings": {
      const { loaded, runtime, runtimeError, presentNow, overrides } = await deps.settings();
      const level = loaded.problems.length || runtimeError ? "warning" : "info";
      return [{ level, text: settingsNotice(loaded, runtime ?? (runtimeError ? `none: ${runtimeError}` : undefined), presentNow, overrides) }];
    }
    case "overview": {
      // The herd first; when it cannot be shown (no runtime yet), say why and still help.
      const herd = await run({ sub: "herd", command: { action: "herd" } }, deps).catch((e): Notice[] => [{ level: "error", text: errorText(e) }]);
      return [...herd, { level: "info", text: shortHelpText() }];
    }
    case "log":
      return info(logNotice(await deps.log({ limit: cmd.limit, ...(cmd.agent !== undefined ? { agent: cmd.agent } : {}) }), cmd.agent));
    case "wait":
      return waitFor(cmd.target, deps);
  }
}

/** The tool's wait on the prompts pending now, its progress shown and Escape stopping it where the UI can. */
async function waitFor(target: string | undefined, deps: CommandDeps): Promise<Notice[]> {
  if (!deps.pending) throw new ShepherdError("invalid_params", "this /shepherd cannot see which prompts are pending; wait for them with the tool's wait.");
  const promptIds = await deps.pending(target);
  if (promptIds.length === 0) {
    return [{ level: "info", text: target === undefined ? "No sheep has a prompt pending." : `${target} has no prompt pending.` }];
  }
  const watch = deps.watch?.();
  try {
    const r = await deps.execute(parseToolCommand({ action: "wait", promptIds }), {
      ...(watch?.signal ? { signal: watch.signal } : {}),
      ...(watch ? { onProgress: (_text: string, details: Record<string, unknown>) => watch.progress(waitProgressText(details.progress as WaitProgress)) } : {}),
    });
    const results = r.details.results as (WaitItem & { label?: string; agent?: string })[];
    return [{ level: results.every((i) => i.status === "completed") ? "info" : "warning", text: waitText(results, COMMAND_WAIT_STEPS) }];
  } finally {
    watch?.end();
  }
}

/**
 * Runs `/shepherd <args>` and returns what to show. Never throws: a failure becomes an error
 * notice whose text starts with its [code], as the tool's would.
 */
export async function runShepherdCommand(args: string, deps: CommandDeps): Promise<Notice[]> {
  try {
    return await run(parseShepherdCommand(args), deps);
  } catch (e) {
    return [{ level: "error", text: errorText(e) }];
  }
}
