/**
 * Every action, once: the tool's schema and description, /shepherd's grammar, help and completion
 * are built from this list (edge/schema.ts, edge/description.ts, command/grammar.ts), and the
 * panel's routes and the docs are checked against it (test/unit/actions/action-table.test.ts). The order
 * is the order the tool names them in its schema and its refusals.
 */
import { close } from "./close.ts";
import { delegate } from "./delegate.ts";
import { diff } from "./diff.ts";
import { doctor } from "./doctor.ts";
import { herd } from "./herd.ts";
import { interrupt } from "./interrupt.ts";
import { land } from "./land.ts";
import { messages } from "./messages.ts";
import { prompt } from "./prompt.ts";
import { prune } from "./prune.ts";
import { read } from "./read.ts";
import { reply } from "./reply.ts";
import { sheep } from "./sheep.ts";
import type { ActionSpec } from "./spec.ts";
import { start } from "./start.ts";
import { status } from "./status.ts";
import { sync } from "./sync.ts";
import { wait } from "./wait.ts";

export const ACTION_TABLE = [
  start,
  prompt,
  wait,
  status,
  close,
  sheep,
  herd,
  read,
  prune,
  delegate,
  diff,
  land,
  sync,
  doctor,
  messages,
  reply,
  interrupt,
] as const;

/**
 * The order of /shepherd's help and completions: what a person does first comes first. /shepherd's
 * own subcommands (log, panel, settings, trust, help; command/parse.ts) stand among the actions by
 * name; an action's forms keep their order; an action not named here comes last.
 */
export const COMMAND_ORDER: readonly (ActionSpec | string)[] = [
  herd,
  sheep,
  start,
  status,
  prompt,
  wait,
  read,
  diff,
  land,
  sync,
  close,
  interrupt,
  prune,
  doctor,
  "log",
  messages,
  reply,
  "panel",
  "settings",
  "trust",
  "help",
];

export type Action = (typeof ACTION_TABLE)[number]["name"];

/** The names of a table's actions, in its order. */
export function actionNames(table: readonly ActionSpec[]): string[] {
  return table.map((a) => a.name);
}

/** The table's entry of one action; the edges parse and run by it. */
export function actionSpec(name: string): ActionSpec {
  const spec = ACTION_TABLE.find((a) => a.name === name);
  if (!spec) throw new Error(`no action "${name}" in the table`);
  return spec;
}
