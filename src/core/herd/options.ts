/** What a shepherd is made with, and the defaults of what it may leave out. */
import type { AuditSink } from "../../ports/audit.ts";
import type { HerdEventSink } from "../../ports/events.ts";
import type { DailyBudgets } from "../../domain/budget.ts";
import type { SpendLedger } from "../../ports/spend-ledger.ts";
import type { Runtime } from "../../ports/runtime.ts";
import type { SheepFiles } from "../../ports/sheep-files.ts";
import type { StateStore } from "../../ports/store.ts";
import type { Workspace } from "../../ports/workspace.ts";
import type { Clock } from "./clock.ts";

export interface ShepherdOptions {
  runtime: Runtime;
  files: SheepFiles;
  /** Identifies this shepherd as the owner of the panes it creates. */
  owner: string;
  clock?: Clock;
  /** How often waiters ask the multiplexer whether panes still live. */
  livenessIntervalMs?: number;
  startTimeoutMs?: number;
  defaultWaitTimeoutSec?: number;
  maxPromptBytes?: number;
  /** Where records are written through, so a reloaded or restarted shepherd can re-attach. */
  store?: StateStore;
  /** Whether the shepherd named by an owner string still runs; its sheep are not ours to take. */
  ownerAlive?: (owner: string) => boolean;
  /** Version control: evidence of each prompt's changes, and worktrees for isolated sheep. */
  workspace?: Workspace;
  /** Take a baseline at each prompt and evidence when it settles (needs a workspace). */
  evidence?: boolean;
  /** Lines of a prompt's patch kept inline in its result; the whole patch is on disk. */
  evidenceInlineLines?: number;
  /** Where each start, ready, prompt, result, close, adopt and prune is told. */
  audit?: AuditSink;
  /** The day's spend of every shepherd of the user, and the user's `budgets` setting (spec: Budgets). */
  ledger?: SpendLedger;
  budgets?: DailyBudgets;
  /** Where a problem nobody's call waits on is told to the person (a sandboxed sheep's state the multiplexer did not take). */
  onWarning?: (message: string) => void;
  /** Where what a person who walked away must hear is published (blocked, question, answer, failed): src/notify carries it. */
  events?: HerdEventSink;
}

export const DEFAULTS = {
  livenessIntervalMs: 1000,
  startTimeoutMs: 60_000,
  defaultWaitTimeoutSec: 1200,
  maxPromptBytes: 4 * 1024 * 1024,
  evidence: true,
  evidenceInlineLines: 200,
};

export type HerdOptions = typeof DEFAULTS & ShepherdOptions;

export function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
