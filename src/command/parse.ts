import { ShepherdError } from "../core/errors.ts";
import { parseToolCommand, type ToolCommand } from "../tool/command.ts";
import type { Params } from "../tool/params.ts";
import { tokenize } from "./tokens.ts";

export interface SubcommandInfo {
  name: string;
  aliases?: string[];
  usage: string;
  summary: string;
  /** Flag name -> the tool parameter it becomes. */
  flags?: Record<string, string>;
  /** Flags that take no value: their presence sets the parameter to true. */
  switches?: Record<string, string>;
}

/** The /shepherd subcommands; the order is the order of the help text and of completions. */
export const SUBCOMMANDS: readonly SubcommandInfo[] = [
  { name: "herd", usage: "herd", summary: "this shepherd's live sheep: state, runtime, label, age, active prompt" },
  { name: "sheep", aliases: ["agents"], usage: "sheep [user|project|both]", summary: "agent definitions, and files skipped with the reason" },
  {
    name: "start",
    usage:
      "start <agent> [--label L] [--placement tab|pane|workspace] [--direction right|down] [--cwd DIR] [--scope user|project|both] [--model M] [--isolate]",
    summary: "start a sheep from an agent definition (no task is sent); --isolate: in a git worktree of its own",
    flags: { label: "label", placement: "placement", direction: "direction", cwd: "cwd", scope: "agentScope", model: "model" },
    switches: { isolate: "isolate" },
  },
  {
    name: "resume",
    usage: "resume <id|label> [--label L] [--placement tab|pane|workspace] [--direction right|down]",
    summary: "continue a closed or exited sheep's conversation in a new pane",
    flags: { label: "label", placement: "placement", direction: "direction" },
  },
  { name: "status", usage: "status <id|label>", summary: "one sheep's state" },
  {
    name: "read",
    usage: "read <id|label> [--turns N] [--source session|screen] [--lines N]",
    summary: "a sheep's recent conversation (prompts, answers, tool calls), or its screen",
    flags: { turns: "turns", source: "source", lines: "lines" },
  },
  {
    name: "diff",
    usage: "diff <id|label> [--stat]",
    summary: "what the sheep's last prompt changed (the patch, or with --stat the files)",
    switches: { stat: "stat" },
  },
  {
    name: "land",
    usage: "land <id|label> [--squash]",
    summary: "merge an isolated sheep's work into your current branch (only if your tree and the merge are clean)",
    switches: { squash: "squash" },
  },
  {
    name: "close",
    usage: "close <id|label> [--remove-worktree [--force]]",
    summary: "close a sheep and its pane (its session file is kept, and said where; a worktree too, unless --remove-worktree)",
    switches: { "remove-worktree": "removeWorktree", force: "force" },
  },
  { name: "prune", usage: "prune", summary: "forget sheep whose panes are gone" },
  { name: "doctor", usage: "doctor", summary: "check versions, runtime, settings, agent files, stale records and orphan panes (changes nothing)" },
  { name: "log", usage: "log [N] [--agent ID|LABEL]", summary: "the last N events of the audit log (default 20)", flags: { agent: "agent" } },
  {
    name: "messages",
    usage: "messages [<id|label>] [--unread]",
    summary: "what the sheep told or asked their shepherd (listed ones count as read)",
    switches: { unread: "unreadOnly" },
  },
  { name: "reply", usage: "reply <id|label> <messageId> <text…>", summary: "answer a sheep's question that waits for a reply" },
  { name: "settings", usage: "settings", summary: "settings in effect, their files and any problems" },
  { name: "help", usage: "help", summary: "this help" },
];

export type ParsedCommand =
  | { sub: "overview" | "help" | "settings" }
  /** Runs as the tool's action: the same typed command the tool's parameters become. */
  | {
      sub: "sheep" | "herd" | "start" | "resume" | "read" | "status" | "close" | "land" | "diff" | "prune" | "doctor" | "messages" | "reply";
      command: ToolCommand;
    }
  /** The audit log is the person's record, not an action of the tool. */
  | { sub: "log"; limit: number; agent?: string };

export const DEFAULT_LOG_LINES = 20;
export const MAX_LOG_LINES = 1000;

export function findSubcommand(word: string): SubcommandInfo | undefined {
  return SUBCOMMANDS.find((s) => s.name === word || s.aliases?.includes(word));
}

function usageError(info: SubcommandInfo, problem: string): ShepherdError {
  return new ShepherdError("invalid_params", `${problem}. Usage: /shepherd ${info.usage}`);
}

/** Positional words and --flags of one subcommand; values are checked later by the tool's own rules. */
function split(info: SubcommandInfo, words: string[]): { positional: string[]; flags: Params } {
  const positional: string[] = [];
  const flags: Params = {};
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith("--")) {
      positional.push(w);
      continue;
    }
    const eq = w.indexOf("=");
    const name = w.slice(2, eq < 0 ? undefined : eq);
    const toggle = info.switches?.[name];
    if (toggle) {
      if (eq >= 0) throw usageError(info, `"--${name}" takes no value`);
      if (toggle in flags) throw usageError(info, `"--${name}" is given twice`);
      flags[toggle] = true;
      continue;
    }
    const param = info.flags?.[name];
    if (!param) throw usageError(info, `unknown option "--${name}" for "${info.name}"`);
    let value: string | undefined;
    if (eq >= 0) value = w.slice(eq + 1);
    else if (i + 1 < words.length) value = words[++i];
    if (value === undefined || value === "") throw usageError(info, `"--${name}" needs a value`);
    if (param in flags) throw usageError(info, `"--${name}" is given twice`);
    flags[param] = value;
  }
  return { positional, flags };
}

/** Parses the text after `/shepherd`. Errors are `[invalid_params]` with the subcommand's usage. */
export function parseShepherdCommand(args: string): ParsedCommand {
  const words = tokenize(args).map((t) => t.text);
  if (words.length === 0) return { sub: "overview" };
  const info = findSubcommand(words[0]!);
  if (!info) {
    throw new ShepherdError("invalid_params", `unknown subcommand "${words[0]}"; one of ${SUBCOMMANDS.map((s) => s.name).join(", ")} (or agents).`);
  }
  const { positional, flags } = split(info, words.slice(1));
  const arity = (min: number, max: number, what: string) => {
    if (positional.length < min) throw usageError(info, `"${info.name}" needs ${what}`);
    if (positional.length > max) throw usageError(info, `unexpected "${positional[max]}"`);
  };
  switch (info.name) {
    case "sheep":
      arity(0, 1, "");
      return { sub: "sheep", command: parseToolCommand({ action: "sheep", ...(positional[0] !== undefined ? { agentScope: positional[0] } : {}) }) };
    case "start":
      arity(1, 1, "an agent name");
      return { sub: "start", command: parseToolCommand({ ...flags, action: "start", agent: positional[0] }) };
    case "resume":
      arity(1, 1, "the id or label of a closed or exited sheep");
      return { sub: "resume", command: parseToolCommand({ ...flags, action: "start", resume: positional[0] }) };
    case "read":
      arity(1, 1, "a sheep's id or label");
      return { sub: "read", command: parseToolCommand({ ...flags, action: "read", target: positional[0] }) };
    case "status":
      arity(1, 1, "a sheep's id or label");
      return { sub: info.name, command: parseToolCommand({ action: info.name, agentId: positional[0] }) };
    case "close":
    case "land":
      arity(1, 1, "a sheep's id or label");
      return { sub: info.name, command: parseToolCommand({ ...flags, action: info.name, agentId: positional[0] }) };
    case "diff":
      arity(1, 1, "a sheep's id or label");
      return { sub: "diff", command: parseToolCommand({ ...flags, action: "diff", target: positional[0] }) };
    case "messages":
      arity(0, 1, "");
      return {
        sub: "messages",
        command: parseToolCommand({
          action: "messages",
          ...(positional[0] !== undefined ? { agentId: positional[0] } : {}),
          unreadOnly: flags.unreadOnly === true,
        }),
      };
    case "reply":
      if (positional.length < 3) throw usageError(info, `"reply" needs a sheep's id or label, the question's id and your answer`);
      // The answer is the rest of the line, so it needs no quotes.
      return {
        sub: "reply",
        command: parseToolCommand({ action: "reply", agentId: positional[0], messageId: positional[1], text: positional.slice(2).join(" ") }),
      };
    case "herd":
    case "prune":
    case "doctor":
      arity(0, 0, "");
      return { sub: info.name, command: parseToolCommand({ action: info.name }) };
    case "log": {
      arity(0, 1, "");
      const limit = positional[0] === undefined ? DEFAULT_LOG_LINES : Number(positional[0]);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_LINES) throw usageError(info, `N must be a whole number from 1 to ${MAX_LOG_LINES}`);
      const agent = flags.agent;
      return { sub: "log", limit, ...(typeof agent === "string" ? { agent } : {}) };
    }
    case "settings":
    case "help":
      arity(0, 0, "");
      return { sub: info.name };
    default:
      throw new ShepherdError("invalid_params", `subcommand "${info.name}" is not handled.`);
  }
}
