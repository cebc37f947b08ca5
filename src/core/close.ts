/** Ending sheep: close one (only a pane we made), and drop those whose panes went by themselves. */
import { ShepherdError } from "./errors.js";
import type { Herd } from "./herd.js";
import { pendingPrompts, refresh, settle, settleAll } from "./ledger.js";
import { findRecord } from "./persistence.js";
import type { AgentRecord, CloseOutcome } from "./types.js";

export async function close(herd: Herd, agentId: unknown): Promise<CloseOutcome> {
  const rec = await findRecord(herd, agentId);
  if (rec.owner !== herd.opts.owner) {
    throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may close it.`);
  }
  if (rec.state === "closed") return { agentId: rec.agentId, cancelledPromptIds: [], alreadyClosed: true };
  // A result already on disk is the answer, not a cancellation; what is left, active or queued, is cancelled.
  await refresh(herd, rec);
  const cancelled = settleAll(herd, rec, { status: "cancelled", error: "[cancelled] the sheep was closed before it answered." });
  await herd.opts.runtime.close(rec.paneId, rec.agentId);
  await confirmGone(herd, rec);
  rec.state = "closed";
  delete rec.activePromptId;
  herd.unwatch(rec.agentId);
  // Only now that the pane is confirmed gone can nothing still be reading these files.
  await herd.opts.host.cleanup(rec.agentId);
  herd.bells.ring(rec.agentId);
  await herd.persist();
  return { agentId: rec.agentId, cancelledPromptIds: cancelled, alreadyClosed: false };
}

/** Forgets closed sheep and drops those whose panes are gone; returns the dropped ids. */
export async function prune(herd: Herd): Promise<string[]> {
  const removed: string[] = [];
  for (const rec of [...herd.registry.agents.values()]) {
    if (rec.state === "closed") {
      herd.forget(rec);
      continue;
    }
    if ((await herd.liveness.fresh(rec)) === "gone") removed.push(...(await dropGone(herd, rec)));
  }
  await herd.persist();
  return removed;
}

/** A sheep whose pane is gone: settle what it owed from its files, then forget it. */
export async function dropGone(herd: Herd, rec: AgentRecord): Promise<string[]> {
  await refresh(herd, rec).catch(() => undefined);
  for (const p of pendingPrompts(herd, rec)) settle(herd, p, { status: "failed", error: `[pane_gone] the pane of ${rec.agentId} is gone.` });
  herd.unwatch(rec.agentId);
  await herd.opts.host.cleanup(rec.agentId).catch(() => undefined);
  herd.forget(rec);
  return [rec.agentId];
}

/** Closing is asynchronous in some multiplexers: files are removed only once the pane is gone. */
export async function confirmGone(herd: Herd, rec: AgentRecord): Promise<void> {
  for (let i = 0; i < 20; i++) {
    if ((await herd.liveness.fresh(rec)) === "gone") return;
    await herd.clock.sleep(100);
  }
  throw new ShepherdError("runtime_error", `the pane ${rec.paneId} of ${rec.agentId} is still there after closing it; its files are kept.`);
}
