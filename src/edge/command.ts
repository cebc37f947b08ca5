/**
 * The edge: raw tool parameters (or a /shepherd subcommand's) become one typed, checked command
 * per action, here and only here. Dispatch routes commands and never looks at raw fields again.
 */
import { ShepherdError } from "../domain/errors.ts";
import { onlyFields } from "../actions/checks.ts";
import type { CloseCommand } from "../actions/close.ts";
import type { DelegateCommand } from "../actions/delegate-command.ts";
import type { DiffCommand } from "../actions/diff.ts";
import type { DoctorCommand } from "../actions/doctor.ts";
import type { HerdCommand } from "../actions/herd.ts";
import type { InterruptCommand } from "../actions/interrupt.ts";
import type { LandCommand } from "../actions/land.ts";
import type { MessagesCommand } from "../actions/messages.ts";
import type { PromptCommand } from "../actions/prompt.ts";
import type { PruneCommand } from "../actions/prune.ts";
import type { ReadCommand } from "../actions/read.ts";
import type { ReplyCommand } from "../actions/reply.ts";
import type { SheepCommand } from "../actions/sheep.ts";
import type { StartCommand } from "../actions/start-command.ts";
import type { StatusCommand } from "../actions/status.ts";
import type { SyncCommand } from "../actions/sync.ts";
import { ACTION_TABLE, type Action, actionSpec } from "../actions/table.ts";
import type { WaitCommand } from "../actions/wait.ts";
import { actionOf, coerce } from "./params.ts";

export type { ReadSource } from "../actions/read.ts";

export type ToolCommand =
  | StartCommand
  | PromptCommand
  | WaitCommand
  | StatusCommand
  | CloseCommand
  | InterruptCommand
  | DiffCommand
  | LandCommand
  | SyncCommand
  | SheepCommand
  | HerdCommand
  | ReadCommand
  | PruneCommand
  | MessagesCommand
  | ReplyCommand
  | DoctorCommand
  | DelegateCommand;

/**
 * The fields each action takes besides `action` (its module's, actions/<action>.ts). The schema is
 * flat (every field of every action in one object), so a field the action does not take (another
 * action's, a typo) is refused here rather than run as if it were not there.
 */
export const ACTION_FIELDS: Record<Action, readonly string[]> = Object.fromEntries(ACTION_TABLE.map((a) => [a.name, Object.keys(a.fields)])) as Record<
  Action,
  string[]
>;

/** Parses and checks raw parameters; every problem is `[invalid_params]` naming the field. */
export function parseToolCommand(raw: unknown): ToolCommand {
  const p = coerce(raw);
  const action = actionOf(p);
  onlyFields(p, ACTION_FIELDS[action], `action "${action}"`, ["action"]);
  // Each action checks its own fields in its module (actions/<action>.ts).
  const spec = actionSpec(action);
  if (!spec.parse) throw new ShepherdError("invalid_params", `action "${action}" has no parser.`);
  return spec.parse(p) as ToolCommand;
}
