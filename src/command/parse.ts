import { ShepherdError } from "../domain/errors.ts";
import { parseToolCommand, type ToolCommand } from "../tool/command.ts";
import type { Params } from "../tool/params.ts";
import { type Token, tokenize } from "./tokens.ts";

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
      "start <agent> [--label L] [--placement tab|pane|workspace] [--direction right|down] [--host NAME] [--cwd DIR] [--scope user|project|both] [--model M] [--isolate]",
    summary: "start a sheep from an agent definition (no task is sent); --host: on a machine of your hosts setting; --isolate: in a git worktree of its own",
    flags: { label: "label", placement: "placement", direction: "direction", host: "host", cwd: "cwd", scope: "agentScope", model: "model" },
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
    name: "prompt",
    usage: "prompt <id|label> [--steer|--follow-up] <text…>",
    summary: "send a sheep a prompt (the rest of the line); --steer: into its running turn; --follow-up: queued behind it",
    switches: { steer: "steer", "follow-up": "followUp" },
  },
  {
    name: "wait",
    usage: "wait [<id|label>]",
    summary: "wait for a sheep's pending prompts (no sheep: every one's) and show the answers; Escape stops waiting",
  },
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
    usage: "land <id|label> [--squash] [--message TEXT]",
    summary: "merge an isolated sheep's work into your current branch (only if your tree and the merge are clean)",
    switches: { squash: "squash" },
    flags: { message: "message" },
  },
  {
    name: "sync",
    usage: "sync <id|label>",
    summary: "merge your current branch into an isolated sheep's worktree (there only); conflicts stay there and its next prompt names them",
  },
  {
    name: "close",
    usage: "close <id|label> [--remove-worktree [--force]]",
    summary: "close a sheep and its pane (its session file is kept, and said where; a worktree too, unless --remove-worktree)",
    switches: { "remove-worktree": "removeWorktree", force: "force" },
  },
  {
    name: "interrupt",
    usage: "interrupt <id|label>",
    summary: "abort a sheep's running turn (its prompt settles cancelled); the sheep stays, and its queued follow-ups go on",
  },
  {
    name: "prune",
    usage: "prune [--force]",
    summary: "forget sheep whose panes are gone, and remove worktrees no record knows (--force: those holding work too)",
    switches: { force: "force" },
  },
  { name: "doctor", usage: "doctor", summary: "check versions, runtime, settings, agent files, stale records and orphan panes (changes nothing)" },
  { name: "log", usage: "log [N] [--agent ID|LABEL]", summary: "the last N events of the audit log (default 20)", flags: { agent: "agent" } },
  {
    name: "messages",
    usage: "messages [<id|label>] [--unread]",
    summary: "what the sheep told or asked their shepherd (listed ones count as read)",
    switches: { unread: "unreadOnly" },
  },
  { name: "reply", usage: "reply <id|label> <messageId> <text…>", summary: "answer a sheep's question that waits for a reply" },
  {
    name: "panel",
    usage: "panel [on|off|url]",
    summary: "the herd in a browser: on (a URL on 127.0.0.1 with a fresh token), off (the port closes), url (again); nothing: url when on, else on",
  },
  { name: "settings", usage: "settings", summary: "settings in effect, their files and any problems" },
  {
    name: "trust",
    usage: "trust",
    summary: "decide whether this project's .pi/shepherd.json and agent files apply: shows what they would change and asks you",
  },
  { name: "help", usage: "help", summary: "every subcommand and its flags (this list)" },
];

export type ParsedCommand =
  | { sub: "overview" | "help" | "settings" | "trust" }
  /** Runs as the tool's action: the same typed command the tool's parameters become. */
  | {
      sub:
        | "sheep"
        | "herd"
        | "start"
        | "resume"
        | "read"
        | "status"
        | "close"
        | "land"
        | "diff"
        | "prune"
        | "doctor"
        | "messages"
        | "reply"
        | "prompt"
        | "interrupt"
        | "sync";
      command: ToolCommand;
    }
  /**
   * Which prompts are pending is known only when it runs: the wait command is built then, from the
   * prompts of the sheep named (or of every sheep).
   */
  | { sub: "wait"; target?: string }
  /** The audit log is the person's record, not an action of the tool. */
  | { sub: "log"; limit: number; agent?: string }
  /** The browser panel is this pi's, not an action of the tool; without a word: its URL when on, else on. */
  | { sub: "panel"; mode?: PanelMode };

export const PANEL_MODES = ["on", "off", "url"] as const;
export type PanelMode = (typeof PANEL_MODES)[number];

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

/** Every name a subcommand answers to, in the order of the help. */
export function subcommandNames(): string[] {
  return SUBCOMMANDS.flatMap((s) => [s.name, ...(s.aliases ?? [])]);
}

/** The slash menu's line for /shepherd: every subcommand, from the one list. */
export function commandDescription(): string {
  return `Manage the sheep: ${SUBCOMMANDS.map((s) => s.name).join(", ")} (no argument: herd and help)`;
}

/** Edits (insert, delete, replace, swap two neighbours) that turn one word into the other. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

function unknownSubcommand(word: string): ShepherdError {
  // A slip of one or two keys; a word of three letters or fewer only of one.
  const lower = word.toLowerCase();
  const limit = lower.length <= 3 ? 1 : 2;
  const near = subcommandNames()
    .map((name) => ({ name, d: editDistance(lower, name) }))
    .filter((c) => c.d <= limit)
    .sort((x, y) => x.d - y.d)[0];
  const hint = near ? ` (did you mean "${near.name}"?)` : "";
  return new ShepherdError("invalid_params", `unknown subcommand "${word}"${hint}; one of ${SUBCOMMANDS.map((s) => s.name).join(", ")} (or agents).`);
}

/**
 * `prompt <sheep> [--steer|--follow-up] <text…>`: the sheep and its switches, then the text,
 * the rest of the line as typed (quotes, spacing and words that look like flags kept).
 */
function promptCommand(info: SubcommandInfo, args: string, tokens: Token[]): ParsedCommand {
  const flags: Params = {};
  let target: string | undefined;
  let i = 0;
  for (; i < tokens.length; i++) {
    const w = tokens[i]!.text;
    if (w.startsWith("--")) {
      for (const [k, v] of Object.entries(split(info, [w]).flags)) {
        if (k in flags) throw usageError(info, `"${w}" is given twice`);
        flags[k] = v;
      }
      continue;
    }
    if (target !== undefined) break;
    target = w;
  }
  const message = i < tokens.length ? args.slice(tokens[i]!.start).trim() : "";
  if (target === undefined || message === "") throw usageError(info, `"prompt" needs a sheep's id or label and the text to send`);
  if (flags.steer && flags.followUp) throw usageError(info, `give one of "--steer" and "--follow-up"`);
  const deliverAs = flags.steer ? "steer" : flags.followUp ? "followUp" : undefined;
  return { sub: "prompt", command: parseToolCommand({ action: "prompt", agentId: target, message, ...(deliverAs ? { deliverAs } : {}) }) };
}

/** Parses the text after `/shepherd`. Errors are `[invalid_params]` with the subcommand's usage. */
export function parseShepherdCommand(args: string): ParsedCommand {
  // A prompt's text is free: an apostrophe in it is no open quote.
  const head = tokenize(args, true);
  if (head[0]?.text === "prompt") return promptCommand(findSubcommand("prompt")!, args, head.slice(1));
  const words = tokenize(args).map((t) => t.text);
  if (words.length === 0) return { sub: "overview" };
  const info = findSubcommand(words[0]!);
  if (!info) throw unknownSubcommand(words[0]!);
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
    case "interrupt":
      arity(1, 1, "a sheep's id or label");
      return { sub: info.name, command: parseToolCommand({ action: info.name, agentId: positional[0] }) };
    case "close":
    case "land":
    case "sync":
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
    case "wait":
      arity(0, 1, "");
      return { sub: "wait", ...(positional[0] !== undefined ? { target: positional[0] } : {}) };
    case "prune":
      arity(0, 0, "");
      return { sub: "prune", command: parseToolCommand({ ...flags, action: "prune" }) };
    case "herd":
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
    case "panel": {
      arity(0, 1, "");
      const mode = positional[0];
      if (mode !== undefined && !(PANEL_MODES as readonly string[]).includes(mode)) throw usageError(info, `"${mode}" is not one of on, off, url`);
      return { sub: "panel", ...(mode !== undefined ? { mode: mode as PanelMode } : {}) };
    }
    case "settings":
    case "trust":
    case "help":
      arity(0, 0, "");
      return { sub: info.name };
    default:
      throw new ShepherdError("invalid_params", `subcommand "${info.name}" is not handled.`);
  }
}
