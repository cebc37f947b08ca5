import { ShepherdError } from "../domain/errors.ts";
import type { ActionSpec, CommandForm } from "../actions/spec.ts";
import { ACTION_TABLE, COMMAND_ORDER } from "../actions/table.ts";
import { parseToolCommand, type ToolCommand } from "../edge/command.ts";
import type { Params } from "../edge/params.ts";
import { type Token, tokenize } from "./tokens.ts";

/**
 * One /shepherd subcommand: an action's form (actions/<action>.ts, with `words` and `params`), or
 * one of /shepherd's own (log, panel, settings, trust, help), which run no action of the tool.
 */
export type SubcommandInfo = Omit<CommandForm, "words" | "params"> & Partial<Pick<CommandForm, "words" | "params">>;

/** /shepherd's own subcommands: the person's record, the browser panel, settings and help. */
const OWN_SUBCOMMANDS: readonly SubcommandInfo[] = [
  { name: "log", usage: "log [N] [--agent ID|LABEL]", summary: "the last N events of the audit log (default 20)", flags: { agent: "agent" } },
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

/** /shepherd's subcommands for a table of actions: each action's forms and /shepherd's own, in the help's order. */
export function subcommandsOf(table: readonly ActionSpec[]): SubcommandInfo[] {
  const rank = (entry: ActionSpec | string) => {
    const i = COMMAND_ORDER.indexOf(entry);
    return i < 0 ? COMMAND_ORDER.length : i;
  };
  const ranked = [...table.flatMap((a) => a.commands.map((s) => ({ s, r: rank(a) }))), ...OWN_SUBCOMMANDS.map((s) => ({ s, r: rank(s.name) }))];
  return ranked.sort((x, y) => x.r - y.r).map(({ s }) => s);
}

/** The /shepherd subcommands, from the action table. */
export const SUBCOMMANDS: readonly SubcommandInfo[] = subcommandsOf(ACTION_TABLE);

export type ParsedCommand =
  | { sub: "overview" | "help" | "settings" | "trust" }
  /** Runs as the tool's action: the same typed command the tool's parameters become. */
  | { sub: ActionSubcommand; command: ToolCommand }
  /**
   * Which prompts are pending is known only when it runs: the wait command is built then, from the
   * prompts of the sheep named (or of every sheep).
   */
  | { sub: "wait"; target?: string }
  /** The audit log is the person's record, not an action of the tool. */
  | { sub: "log"; limit: number; agent?: string }
  /** The browser panel is this pi's, not an action of the tool; without a word: its URL when on, else on. */
  | { sub: "panel"; mode?: PanelMode };

/** The subcommands that run an action of the tool, as command/run.ts shows each one's answer. */
export type ActionSubcommand =
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

export const PANEL_MODES = ["on", "off", "url"] as const;
export type PanelMode = (typeof PANEL_MODES)[number];

export const DEFAULT_LOG_LINES = 20;
export const MAX_LOG_LINES = 1000;

export function findSubcommand(word: string, subcommands: readonly SubcommandInfo[] = SUBCOMMANDS): SubcommandInfo | undefined {
  return subcommands.find((s) => s.name === word || s.aliases?.includes(word));
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
  return { sub: "prompt", command: parseToolCommand(info.params!([target, message], flags)) };
}

function checkArity(info: SubcommandInfo, positional: string[], min: number, max: number, what: string): void {
  if (positional.length < min) throw usageError(info, `"${info.name}" needs ${what}`);
  if (positional.length > max) throw usageError(info, `unexpected "${positional[max]}"`);
}

/** The tool's parameters that an action's subcommand and its words become, before the tool's own checks. */
export function actionParams(info: SubcommandInfo, words: string[]): Params {
  if (!info.params || !info.words) throw new ShepherdError("invalid_params", `subcommand "${info.name}" runs no action of the tool.`);
  const { positional, flags } = split(info, words);
  checkArity(info, positional, info.words.min, info.words.max, info.words.what);
  return info.params(positional, flags);
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
  const arity = (min: number, max: number, what: string) => checkArity(info, positional, min, max, what);
  if (info.name === "wait") {
    arity(0, 1, "");
    return { sub: "wait", ...(positional[0] !== undefined ? { target: positional[0] } : {}) };
  }
  if (info.params) return { sub: info.name as ActionSubcommand, command: parseToolCommand(actionParams(info, words.slice(1))) };
  switch (info.name) {
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
