/**
 * What one action is, as every edge sees it: its fields (the tool's schema), the words the model
 * reads about it (the tool's description) and its /shepherd forms (grammar, help, completion).
 * The table (table.ts) lists one of these per action; the edges are built from that list.
 */
import type { TSchema } from "@sinclair/typebox";
import type { DispatchContext } from "../context/context.ts";
import type { CallArgs, Paint } from "./call-text.ts";
import type { ActionResult, Notice } from "./notice.ts";
import type { ToolResult } from "./result.ts";

/** A tool call's raw parameters, or a /shepherd line's once split into words and flags. */
export type Params = Record<string, unknown>;

/** What the first word after a /shepherd subcommand names: completion offers those. */
export type FirstWord = "sheep" | "agent" | "resumable" | "scope";

/** One /shepherd subcommand that runs the action. */
export interface CommandForm<C extends { action: string } = { action: string }> {
  name: string;
  aliases?: string[];
  usage: string;
  summary: string;
  /** Flag name -> the tool parameter it becomes. */
  flags?: Record<string, string>;
  /** Flags that take no value: their presence sets the parameter to true. */
  switches?: Record<string, string>;
  /** How many words follow the subcommand besides its flags, and what is missing when too few. */
  words: { min: number; max: number; what: string };
  /** The tool's parameters that the words and flags become; checked by the tool's own rules. */
  params(words: string[], flags: Params): Params;
  first?: FirstWord;
  /**
   * What a person sees of its answer: `run` runs the checked command through the edge, `now` is the
   * person's clock. Without it, the tool's own text (notice.ts plainAnswer).
   */
  answer?(run: () => Promise<ActionResult>, command: C, now: () => number): Promise<Notice[]>;
}

export interface ActionSpec<N extends string = string, C extends { action: string } = { action: string }> {
  name: N;
  /** The action in the tool's description: its name, and in brackets what it does when the name does not say. */
  described: string;
  /** The fields it takes besides `action`, in the order its refusals list them. */
  fields: Readonly<Record<string, TSchema>>;
  /** Its /shepherd subcommands, in the order of the help. */
  commands: readonly CommandForm<C>[];
  /** Its raw fields (only those it takes: the edge refused the others) checked into its typed command. */
  parse?(p: Params): C;
  /** How pi's transcript shows a call of it, after "shepherd <action>": its raw, unchecked arguments made printable. */
  renderCall?(args: CallArgs, t: Paint, expanded: boolean): string[];
  /** Runs a checked command on the core through the dispatch context: the answer's text and details. */
  run?(cmd: C, ctx: DispatchContext): Promise<ToolResult>;
}

/** Keeps the action's name a literal type, so the table's names type the commands. */
export function defineAction<const N extends string, C extends { action: N } = { action: N }>(spec: ActionSpec<N, C>): ActionSpec<N, C> {
  return spec;
}
