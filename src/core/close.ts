/** Ending sheep: close one (only a pane we made), and drop those whose panes went by themselves. */
import { isShepherdError, ShepherdError } from "./errors.js";
import type { Herd } from "./herd.js";
import { pendingPrompts, refresh, settle, settleAll } from "./ledger.js";
import { findRecord } from "./persistence.js";
import type { AgentRecord, CloseOutcome } from "./types.js";

export async function close(herd: Herd, agentId: unknown): Promise<CloseOutcome> {
  const rec = await findRecord(herd, agentId);
  if (rec.owner !== herd.opts.owner) {
    throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may close it.`);
  }
  // One operation on a sheep at a time: a prompt racing a close must not bring it back.
  return herd.exclusive(rec.agentId, async () => {
    if (rec.state === "closed") return { agentId: rec.agentId, cancelledPromptIds: [], alreadyClosed: true };
    if (herd.registry.agents.get(rec.agentId) !== rec) throw herd.registry.unknownAgent(rec.agentId);
    // A result already on disk is the answer, not a cancellation.
    await refresh(herd, rec);
    await closeOurPane(herd, rec);
    // The answer may have landed while the pane went; what is left, active or queued, is cancelled.
    await refresh(herd, rec);
    const cancelled = settleAll(herd, rec, { status: "cancelled", error: "[cancelled] the sheep was closed before it answered." });
    rec.state = "closed";
    delete rec.activePromptId;
    herd.unwatch(rec.agentId);
    // Only now that the pane is confirmed gone can nothing still be reading these files.
    const sessionPath = await herd.opts.host.cleanup(rec.agentId);
    herd.bells.ring(rec.agentId);
    await herd.persist();
    herd.audit({ event: "close", agentId: rec.agentId, label: rec.label, cancelledPromptIds: cancelled });
    return { agentId: rec.agentId, cancelledPromptIds: cancelled, alreadyClosed: false, ...(sessionPath ? { sessionPath } : {}) };
  });
}

/**
 * Closes the sheep's pane and waits until it is gone. A pane id that now carries another mark
 * (tmux restarted and reused it, or herdr did) means ours went already: the runtime refuses to
 * touch it, and liveness, which reads the mark, confirms ours is gone.
 */
async function closeOurPane(herd: Herd, rec: AgentRecord): Promise<void> {
  try {
    await herd.opts.runtime.close(rec.paneId, rec.agentId);
  } catch (e) {
    if (!isShepherdError(e, "not_owned")) throw e;
    const now = await herd.liveness.fresh(rec);
    if (now === undefined) throw new ShepherdError("runtime_error", `could not tell whether pane ${rec.paneId} is still ${rec.agentId}'s; close it again.`);
    if (now.state !== "gone") throw e;
  }
  await confirmGone(herd, rec);
}

/** Forgets closed sheep and drops those whose panes are gone; returns the dropped ids. */
export async function prune(herd: Herd): Promise<string[]> {
  const removed: string[] = [];
  for (const rec of [...herd.registry.agents.values()]) {
    if (rec.state === "closed") {
      herd.forget(rec);
      continue;
    }
    if ((await herd.liveness.fresh(rec))?.state === "gone") removed.push(...(await dropGone(herd, rec)));
  }
  await herd.persist();
  return removed;
}

/** A sheep whose pane is gone: settle what it owed from its files, then forget it. */
export function dropGone(herd: Herd, rec: AgentRecord): Promise<string[]> {
  return herd.exclusive(rec.agentId, async () => {
    if (herd.registry.agents.get(rec.agentId) !== rec || rec.state === "closed") return [];
    await refresh(herd, rec).catch(() => undefined);
    for (const p of pendingPrompts(herd, rec)) settle(herd, p, { status: "failed", error: `[pane_gone] the pane of ${rec.agentId} is gone.` });
    herd.unwatch(rec.agentId);
    await herd.opts.host.cleanup(rec.agentId).catch(() => undefined);
    herd.forget(rec);
    herd.audit({ event: "prune", agentId: rec.agentId, label: rec.label });
    return [rec.agentId];
  });
}

/** Closing is asynchronous in some multiplexers: files are removed only once the pane is gone. */
export async function confirmGone(herd: Herd, rec: AgentRecord): Promise<void> {
  for (let i = 0; i < 20; i++) {
    if ((await herd.liveness.fresh(rec))?.state === "gone") return;
    await herd.clock.sleep(100);
  }
  throw new ShepherdError("runtime_error", `the pane ${rec.paneId} of ${rec.agentId} is still there after closing it; its files are kept.`);
}
