/**
 * How pi's transcript shows a call of the tool, the parts after "shepherd <action>": each action's
 * module gives its own (ActionSpec.renderCall). Every text the model wrote is made printable here,
 * before the theme colours it.
 */
import { printable } from "../domain/printable.ts";

export interface Paint {
  fg(color: "accent" | "success" | "error" | "warning" | "muted" | "dim" | "toolTitle", text: string): string;
  bold(text: string): string;
}

/** A call's arguments as the model sent them: unchecked. */
export type CallArgs = Record<string, unknown>;

const oneLine = (s: string, max: number) => {
  const flat = printable(s).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** Text shown whole when expanded (Ctrl+O), else one line cut at `max`. */
export function preview(text: string, max: number, expanded: boolean, indent: string): string {
  return expanded ? printable(text).split("\n").join(`\n${indent}`) : oneLine(text, max);
}

/** A field of the call as printable text, when it is a string. */
export function callString(args: CallArgs, key: string): string | undefined {
  return typeof args[key] === "string" ? printable(args[key] as string) : undefined;
}

/** A call that names one sheep (status, close, land, sync): the sheep, and the flags those actions take. */
export function sheepCall(args: CallArgs, t: Paint): string[] {
  const parts = [t.fg("accent", callString(args, "agentId") ?? "?")];
  if (args.removeWorktree === true) parts.push(t.fg("dim", args.force === true ? "(remove worktree, force)" : "(remove worktree)"));
  if (args.squash === true) parts.push(t.fg("dim", "(squash)"));
  return parts;
}
