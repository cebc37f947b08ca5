/**
 * A delegation that runs while the shepherd goes on talking: it returns once its first tasks have
 * their prompts, records every step as it goes, and the courier pushes one message with every
 * result (in input order) once the last is final. A reload stops it where it is; the next
 * shepherd finishes what was running and reports the tasks that never started as cancelled.
 */
import type { Courier } from "./courier.ts";
import { Delegation, type DelegateItem, type DelegateTask, type Primitives } from "../delegation/delegate.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { newId } from "../../domain/ids.ts";
import type { DelegateMode, DelegationItemRecord, DelegationRecord } from "../../ports/types.ts";

export interface BackgroundOptions {
  keepOpen: boolean;
  maxParallel: number;
  waitTimeoutSec: number;
  /** The tool call's signal: it cancels the delegation only until the call returns. */
  signal?: AbortSignal;
}

export interface BackgroundStarted {
  delegationId: string;
  mode: DelegateMode;
  /** Every task; those of the first wave with their sheep and prompt (or their outcome). */
  items: DelegationItemRecord[];
}

export async function delegateInBackground(
  shepherd: Primitives,
  herd: Herd,
  courier: Courier,
  mode: DelegateMode,
  tasks: DelegateTask[],
  o: BackgroundOptions,
): Promise<BackgroundStarted> {
  const delegationId = newId("delegation");
  const record: DelegationRecord = {
    delegationId,
    owner: herd.opts.owner,
    mode,
    keepOpen: o.keepOpen,
    createdAt: new Date(herd.clock.now()).toISOString(),
    items: tasks.map((t) => ({ agent: t.definition.name, task: t.task })),
  };
  // Written with the record: a shepherd that dies before a task started leaves its reservation to the next one.
  const reservations = tasks.flatMap((t, item) => (t.budget?.budget ? [{ item, key: t.budget.key, budget: t.budget.budget }] : []));
  if (reservations.length > 0) record.reservations = reservations;
  herd.registry.delegations.set(delegationId, record);
  await herd.persist();
  // Escape on the call cancels what it started; once it returned, the delegation is on its own.
  const call = new AbortController();
  const onCallAbort = () => call.abort(o.signal?.reason);
  if (o.signal?.aborted) call.abort(o.signal.reason);
  else o.signal?.addEventListener("abort", onCallAbort, { once: true });
  const item = (i: number) => record.items[i]!;
  const delegation = new Delegation(shepherd, mode, tasks, {
    keepOpen: o.keepOpen,
    maxParallel: o.maxParallel,
    waitTimeoutSec: o.waitTimeoutSec,
    signal: AbortSignal.any([call.signal, herd.lifetime.signal]),
    detach: herd.lifetime.signal,
    background: true,
    clock: herd.clock,
    now: () => herd.clock.now(),
    hooks: {
      delegationId,
      started: (i, agentId) => {
        item(i).agentId = agentId;
        void herd.persist();
      },
      prompted: (i, promptId) => {
        item(i).promptId = promptId;
        void herd.persist();
      },
      finished: (i, it) => {
        Object.assign(item(i), outcomeOf(it));
        void herd.persist();
      },
    },
  });
  const runner = delegation
    .run()
    .then((items) => {
      if (herd.disposed) return;
      // A chain that stopped reports the steps that ran, as a foreground chain does.
      if (mode === "chain") record.items = record.items.slice(0, items.length).map((it, i) => ({ ...it, step: i + 1 }));
      record.done = true;
      // Every task started or had its reservation let go by the run.
      delete record.reservations;
    })
    .catch(() => undefined)
    .finally(() => {
      courier.runners.delete(delegationId);
      void herd.persist().then(() => courier.kick());
    });
  courier.runners.set(delegationId, runner);
  try {
    await delegation.firstWave;
  } finally {
    o.signal?.removeEventListener("abort", onCallAbort);
  }
  if (call.signal.aborted) {
    // Cancelled by the call itself: its sheep are closed, and the model hears it from the call.
    await runner;
    record.delivered = { at: new Date(herd.clock.now()).toISOString() };
    await herd.persist();
    throw new ShepherdError("aborted", "the background delegation was cancelled before it got going; its sheep were closed.");
  }
  await herd.persist();
  return { delegationId, mode, items: record.items.map((i) => ({ ...i })) };
}

function outcomeOf(it: DelegateItem): Partial<DelegationItemRecord> {
  return {
    task: it.task,
    status: it.status,
    ...(it.agentId !== undefined ? { agentId: it.agentId } : {}),
    ...(it.text !== undefined ? { text: it.text } : {}),
    ...(it.error !== undefined ? { error: it.error } : {}),
    ...(it.usage !== undefined ? { usage: it.usage } : {}),
    ...(it.evidence !== undefined ? { evidence: it.evidence } : {}),
    ...(it.evidenceError !== undefined ? { evidenceError: it.evidenceError } : {}),
    ...(it.worktree !== undefined ? { worktree: it.worktree } : {}),
  };
}
