/**
 * Where every tool call and /shepherd subcommand enters: `doctor` runs without a composed
 * shepherd (it is what a person runs when none can be set up), every other command runs on one.
 * A start that finds no runtime gets the doctor's one-line verdict, and whatever is refused or
 * fails is told to the audit log.
 */
import { errorText, isShepherdError, shorten, ShepherdError } from "../domain/errors.ts";
import type { DoctorReport } from "../doctor/types.ts";
import { type AuditInput, notDone, wasTold } from "../ports/audit.ts";
import type { Edge } from "../ports/types.ts";
import { parseToolCommand, type ToolCommand } from "./command.ts";
import type { DispatchContext } from "../context/context.ts";
import { execute, result, type ToolResult } from "./dispatch.ts";
import { doctorText, verdictLine } from "../texts/format.ts";

export interface EntryDeps {
  /** The composed shepherd's context; throws (e.g. `[runtime_unavailable]`) when none can be set up. */
  context(): Promise<DispatchContext>;
  /** Every check, or with `brief` only those that decide the runtime (quick, for an error). */
  doctor(brief: boolean): Promise<DoctorReport>;
  /** Stamps and writes an audit event; never throws. */
  audit?(event: AuditInput): void;
  /** Where the calls come from (the model's tool when absent): the context and every audit event say so. */
  edge?: Edge;
  /** Told after a command ran, with what it answered: an edge that tells the person elsewhere too (the panel's reply in the transcript). */
  done?(cmd: ToolCommand, result: ToolResult): void;
}

/** The same entry for another edge: its context and its audit events name that edge. */
export function entryFrom(deps: EntryDeps, edge: Edge): EntryDeps {
  return { ...deps, edge, context: async () => ({ ...(await deps.context()), edge }) };
}

export async function runToolCall(raw: unknown, deps: EntryDeps): Promise<ToolResult> {
  const action = typeof (raw as { action?: unknown } | undefined)?.action === "string" ? String((raw as { action: string }).action) : "?";
  let cmd: ToolCommand;
  try {
    cmd = parseToolCommand(raw);
  } catch (e) {
    audited(deps, action, e);
    throw e;
  }
  return runCommand(cmd, deps);
}

export async function runCommand(cmd: ToolCommand, deps: EntryDeps): Promise<ToolResult> {
  try {
    if (cmd.action === "doctor") {
      const report = await deps.doctor(false);
      return result("doctor", doctorText(report), { checks: report.checks, counts: report.counts });
    }
    const ctx = await deps.context();
    const done = await execute(cmd, deps.edge !== undefined && ctx.edge === undefined ? { ...ctx, edge: deps.edge } : ctx);
    try {
      deps.done?.(cmd, done);
    } catch {
      // telling it elsewhere must never change what the command answered
    }
    return done;
  } catch (e) {
    const err = cmd.action === "start" && isShepherdError(e, "runtime_unavailable") ? await withVerdict(e, deps) : e;
    audited(deps, cmd.action, err);
    throw err;
  }
}

/** The doctor's verdict added to the error, so the one message says what to fix. */
async function withVerdict(e: ShepherdError, deps: EntryDeps): Promise<ShepherdError> {
  const line = await deps
    .doctor(true)
    .then(verdictLine)
    .catch((d: unknown) => `doctor could not run: ${errorText(d)}`);
  return new ShepherdError("runtime_unavailable", `${e.message.replace(/^\[runtime_unavailable\] /, "")}\nDoctor: ${line}`, { cause: e });
}

function audited(deps: EntryDeps, action: string, e: unknown): void {
  // A start that failed, and what the core told itself (it still knew the sheep's id and label), are logged already.
  if (!deps.audit || isShepherdError(e, "start_failed") || wasTold(e)) return;
  deps.audit({ ...notDone(action, e instanceof ShepherdError ? e.code : "error", shorten(errorText(e))), edge: deps.edge ?? "tool" });
}
