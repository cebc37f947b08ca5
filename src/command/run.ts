import { errorText } from "../core/errors.ts";
import type { AuditEvent } from "../ports/audit.ts";
import type { AgentStatus, CloseOutcome, StartedAgent } from "../core/types.ts";
import type { LoadedSettings } from "../settings.ts";
import type { ToolCommand } from "../tool/command.ts";
import { visibleControls } from "../tool/evidence-text.ts";
import { parseShepherdCommand, type ParsedCommand } from "./parse.ts";
import type { ListedMessage } from "../core/mail.ts";
import type { WarmCount } from "../core/shepherd.ts";
import { closeText, herdText, isolationText, messagesText, sheepLine, startedLine, warmPoolLines } from "../tool/format.ts";
import { commandWorktreeSteps, helpText, logNotice, settingsNotice } from "./text.ts";
import { quoteWord } from "./tokens.ts";

export interface Notice {
  level: "info" | "warning" | "error";
  text: string;
}

/** A tool result as execute() returns it. */
export interface ActionResult {
  content: { type: "text"; text: string }[];
  details: Record<string, unknown>;
}

export interface CommandDeps {
  /** The tool's own execute, bound to this shepherd and this UI: every subcommand runs the same core. */
  execute(command: ToolCommand): Promise<ActionResult>;
  /** The last events of the audit log, oldest first; with `agent`, of that sheep only. */
  log(o: { limit: number; agent?: string }): Promise<AuditEvent[]>;
  /** The settings in effect (even when no runtime could be set up), and the runtime if there is one. */
  settings(): Promise<{ loaded: LoadedSettings; runtime?: string; runtimeError?: string }>;
  now(): number;
}

const HOW_TO_START = "Start one with /shepherd start <agent> (/shepherd sheep lists agents).";

const textOf = (r: ActionResult) => r.content.map((c) => c.text).join("");

async function run(cmd: ParsedCommand, deps: CommandDeps): Promise<Notice[]> {
  const info = (text: string): Notice[] => [{ level: "info", text }];
  switch (cmd.sub) {
    case "help":
      return info(helpText());
    case "settings": {
      const { loaded, runtime, runtimeError } = await deps.settings();
      const level = loaded.problems.length || runtimeError ? "warning" : "info";
      return [{ level, text: settingsNotice(loaded, runtime ?? (runtimeError ? `none: ${runtimeError}` : undefined)) }];
    }
    case "overview": {
      // The herd first; when it cannot be shown (no runtime yet), say why and still help.
      const herd = await run({ sub: "herd", command: { action: "herd" } }, deps).catch((e): Notice[] => [{ level: "error", text: errorText(e) }]);
      return [...herd, { level: "info", text: helpText() }];
    }
    case "herd": {
      const { details } = await deps.execute(cmd.command);
      const pool = warmPoolLines((details.warm ?? {}) as Record<string, WarmCount>, (details.warmProblems ?? {}) as Record<string, string>);
      return info([herdText(details.agents as AgentStatus[], HOW_TO_START, deps.now()), ...pool].join("\n"));
    }
    case "start":
    case "resume": {
      const started = (await deps.execute(cmd.command)).details.agent as StartedAgent;
      const isolation = started.worktree ? [isolationText(started, commandWorktreeSteps(started.label).land)] : [];
      return info([startedLine(started), ...(started.attachHint ? [`Watch it: ${started.attachHint}`] : []), ...isolation].join("\n"));
    }
    case "status":
      return info(sheepLine((await deps.execute(cmd.command)).details.status as AgentStatus, deps.now()));
    case "close": {
      // The tool's words, with the next steps for a kept worktree as a person types them.
      const r = await deps.execute(cmd.command);
      const closed = r.details.closed as CloseOutcome;
      const label = typeof r.details.label === "string" ? r.details.label : undefined;
      return info(closeText(closed, label, commandWorktreeSteps(label ?? closed.agentId)));
    }
    case "land":
    case "read":
      return info(textOf(await deps.execute(cmd.command)));
    case "diff":
      // Patches hold the repository's bytes: escape sequences in them must not reach the terminal as such.
      return info(visibleControls(textOf(await deps.execute(cmd.command))));
    case "sheep": {
      const r = await deps.execute(cmd.command);
      const skipped = (r.details.skipped as unknown[] | undefined)?.length ?? 0;
      return [{ level: skipped ? "warning" : "info", text: `Agent definitions (scope ${String(r.details.scope)}):\n${textOf(r)}` }];
    }
    case "prune":
      return info(textOf(await deps.execute(cmd.command)));
    case "doctor": {
      const r = await deps.execute(cmd.command);
      const counts = r.details.counts as { warn: number; fail: number };
      return [{ level: counts.fail ? "error" : counts.warn ? "warning" : "info", text: textOf(r) }];
    }
    case "log":
      return info(logNotice(await deps.log({ limit: cmd.limit, ...(cmd.agent !== undefined ? { agent: cmd.agent } : {}) }), cmd.agent));
    case "messages": {
      const r = await deps.execute(cmd.command);
      const unreadOnly = cmd.command.action === "messages" && cmd.command.unreadOnly === true;
      const list = r.details.messages as ListedMessage[];
      return info(messagesText(list, unreadOnly, (m) => `Answer it: /shepherd reply ${quoteWord(m.label)} ${m.messageId} <your answer>`));
    }
    case "reply":
      // The tool's own words: a reply reads the same to the model and to a person.
      return info(textOf(await deps.execute(cmd.command)));
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
