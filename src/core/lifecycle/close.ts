/** Ending sheep: close one (only a pane we made), and drop those whose panes went by themselves. */
import type { AgentId } from "../../domain/ids.ts";
import { pruneHostPanes, pruneLeftovers, pruneSpecs } from "./leftovers.ts";
import type { PaneLiveness } from "../../ports/runtime.ts";
import { errorText, exitText, isShepherdError, ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { pendingPrompts, refresh, settle, settleAll } from "../prompts/ledger.ts";
import { howEnded } from "../herd/liveness.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord, CloseOptions, CloseOutcome } from "../../ports/types.ts";
import { guardRemoval, removeWorktree, tidyWorktree } from "./worktrees.ts";

export async function close(herd: Herd, agentId: AgentId, o: CloseOptions = {}): Promise<CloseOutcome> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("close", rec, () => closeRecord(herd, rec, o));
}

async function closeRecord(herd: Herd, rec: AgentRecord, o: CloseOptions): Promise<CloseOutcome> {
  if (rec.owner !== herd.opts.owner) {
    throw new ShepherdError("not_owned", `sheep ${rec.agentId} belongs to another shepherd; only its creator may close it.`);
  }
  // One operation on a sheep at a time: a prompt racing a close must not bring it back.
  return herd.exclusive(rec.agentId, async () => {
    // Refused before anything happens: a worktree with work in it is not removed without force.
    if (o.removeWorktree) await guardRemoval(herd, rec, o.force === true);
    if (rec.state === "closed") {
      const worktree = await worktreeAfterClose(herd, rec, o);
      if (worktree.worktree?.removed) await herd.persist();
      return { agentId: rec.agentId, cancelledPromptIds: [], alreadyClosed: true, ...worktree };
    }
    if (herd.registry.agents.get(rec.agentId) !== rec) throw herd.registry.unknownAgent(rec.agentId);
    herd.closing.add(rec.agentId);
    try {
      return await closeLive(herd, rec, o);
    } finally {
      herd.closing.delete(rec.agentId);
      // A waiter that left its prompt to this close looks again now, whatever became of it.
      herd.bells.ring(rec.agentId);
    }
  });
}

async function closeLive(herd: Herd, rec: AgentRecord, o: CloseOptions): Promise<CloseOutcome> {
  // A result already on disk is the answer, not a cancellation.
  await refresh(herd, rec);
  await closeOurPane(herd, rec);
  // The answer may have landed while the pane went; what is left, active or queued, is cancelled.
  await refresh(herd, rec);
  const cancelled = await settleAll(herd, rec, { status: "cancelled", error: "[cancelled] the sheep was closed before it answered." });
  herd.setState(rec, "closed");
  delete rec.activePromptId;
  herd.unwatch(rec.agentId);
  // Only now that the pane is confirmed gone can nothing still be reading these files.
  const sessionPath = await herd.opts.files.cleanup(rec.agentId);
  // With the sheep gone, nothing writes to its worktree any more.
  const worktree = await worktreeAfterClose(herd, rec, o);
  herd.bells.ring(rec.agentId);
  await herd.persist();
  herd.audit({ event: "close", agentId: rec.agentId, label: rec.label, cancelledPromptIds: cancelled });
  return {
    agentId: rec.agentId,
    cancelledPromptIds: cancelled,
    alreadyClosed: false,
    ...(sessionPath ? { sessionPath } : {}),
    ...(rec.host !== undefined ? { host: rec.host } : {}),
    ...worktree,
  };
}

async function worktreeAfterClose(herd: Herd, rec: AgentRecord, o: CloseOptions): Promise<Pick<CloseOutcome, "worktree">> {
  const wt = rec.worktree;
  if (!wt) return {};
  // Checked again without force: the sheep may have written more before its pane went.
  const removed = o.removeWorktree === true && (await removeWorktree(herd, rec, o.force === true));
  return { worktree: { path: wt.path, branch: wt.branch, removed } };
}

/**
 * Closes the sheep's pane and waits until it is gone. A pane id that now carries another mark
 * (tmux restarted and reused it, or herdr did) means ours went already: the runtime refuses to
 * touch it, and liveness, which reads the mark, confirms ours is gone.
 */
async function closeOurPane(herd: Herd, rec: AgentRecord): Promise<void> {
  try {
    // The runtime saw it go: no need to ask the multiplexer again.
    if (await herd.opts.runtime.close(rec.paneId, rec.agentId)) herd.liveness.gone(rec.agentId);
  } catch (e) {
    if (!isShepherdError(e, "not_owned")) throw e;
    const now = await herd.liveness.fresh(rec);
    if (now === undefined) throw new ShepherdError("runtime_error", `could not tell whether pane ${rec.paneId} is still ${rec.agentId}'s; close it again.`);
    if (now.state !== "gone") throw e;
  }
  await confirmGone(herd, rec);
}

export interface KeptWorktree {
  agentId: string;
  label: string;
  path: string;
  branch: string;
  reason: string;
  /** A worktree no record knows (left by a start cut short): only prune with force removes it. */
  leftover?: true;
}

/** The label of a worktree no record knows: its sheep was never recorded. */
const NO_RECORD = "no record";

export interface PruneOutcome {
  /** Sheep whose panes were gone, or whose pi had exited (their dead panes closed): dropped, or closed when their worktree is kept. */
  removed: string[];
  /** Of those, the sheep whose pi had exited while its pane stayed: how it ended. */
  exited: { agentId: string; label: string; exit: string }[];
  /** Sheep whose pi had exited but whose pane would not close: kept recorded, for a later close or prune. */
  unclosed: { agentId: string; label: string; reason: string }[];
  /** Worktrees prune left alone because they hold work; their records stay (closed). */
  kept: KeptWorktree[];
  /** Closed sheep whose records prune dropped (their worktrees, if any, removed: see worktrees). */
  forgotten: { agentId: string; label: string }[];
  /** Worktrees and branches prune removed, of closed and of gone sheep alike. */
  worktrees: { agentId: string; label: string; path: string; branch: string }[];
  /** Launch specs of starts cut short (no record knows them), removed with what their starts wrote; host absent: this machine. */
  specs?: { agentId: string; host?: string }[];
  /** Panes this machine started on hosts that no record knows (a shepherd killed during a remote start), closed. */
  hostPanes?: { agentId: string; host: string; paneId: string }[];
}

const keptOf = (rec: AgentRecord, reason: string): KeptWorktree => ({
  agentId: rec.agentId,
  label: rec.label,
  path: rec.worktree!.path,
  branch: rec.worktree!.branch,
  reason,
});

/**
 * Forgets closed sheep, drops those whose panes are gone, and closes the panes of those whose pi
 * exited (tmux keeps such a pane, herdr its shell) before dropping them; a worktree with work in
 * it is never removed.
 */
export async function prune(herd: Herd, o: { force?: boolean } = {}): Promise<PruneOutcome> {
  const out: PruneOutcome = { removed: [], exited: [], unclosed: [], kept: [], forgotten: [], worktrees: [] };
  const wasRemoved = (rec: AgentRecord, wt: AgentRecord["worktree"]) => {
    if (wt && !rec.worktree) out.worktrees.push({ agentId: rec.agentId, label: rec.label, path: wt.path, branch: wt.branch });
  };
  for (const rec of [...herd.registry.agents.values()]) {
    const wt = rec.worktree;
    if (rec.state === "closed") {
      const why = await herd.exclusive(rec.agentId, () => tidyWorktree(herd, rec));
      wasRemoved(rec, wt);
      if (why) out.kept.push(keptOf(rec, why));
      else {
        out.forgotten.push({ agentId: rec.agentId, label: rec.label });
        herd.forget(rec);
        herd.audit({ event: "prune", agentId: rec.agentId, label: rec.label });
      }
      continue;
    }
    const asked = await herd.liveness.fresh(rec);
    if (asked === undefined) continue; // the multiplexer could not answer: no news
    if (asked.state !== "gone") {
      const dead = await closeExited(herd, rec, asked);
      if (dead.unclosed !== undefined) out.unclosed.push({ agentId: rec.agentId, label: rec.label, reason: dead.unclosed });
      if (dead.exit === undefined) continue;
      out.exited.push({ agentId: rec.agentId, label: rec.label, exit: dead.exit });
    }
    const gone = await dropGone(herd, rec);
    wasRemoved(rec, wt);
    out.removed.push(...gone.ids);
    if (gone.kept) out.kept.push(keptOf(rec, gone.kept));
  }
  const left = await pruneLeftovers(herd, o.force === true);
  for (const m of left.removed) out.worktrees.push({ agentId: m.agentId, label: NO_RECORD, path: m.worktree.path, branch: m.worktree.branch });
  for (const k of left.kept)
    out.kept.push({ agentId: k.mark.agentId, label: NO_RECORD, path: k.mark.worktree.path, branch: k.mark.worktree.branch, reason: k.reason, leftover: true });
  const specs = await pruneSpecs(herd);
  if (specs.length) out.specs = specs;
  const panes = await pruneHostPanes(herd);
  if (panes.length) out.hostPanes = panes;
  await herd.persist();
  return out;
}

/**
 * A sheep whose pi ended while its pane stayed: what it answered settles from its files, what it
 * still owed fails as a wait would fail it, and its dead pane is closed. Returns how pi ended once
 * the pane is gone; nothing while pi runs; why not when the pane would not close.
 */
async function closeExited(herd: Herd, rec: AgentRecord, asked: PaneLiveness): Promise<{ exit?: string; unclosed?: string }> {
  return herd.exclusive(rec.agentId, async () => {
    if (herd.registry.agents.get(rec.agentId) !== rec || rec.state === "closed") return {};
    const snap = await refresh(herd, rec).catch(() => undefined);
    if (!snap) return {};
    let live = await herd.liveness.unlessStale(rec, snap, asked);
    // The pid the sheep reported is gone while the multiplexer has not collected pi's status yet
    // (a moment after a kill, or a SIGCHLD tmux missed): ask again for a moment before the pid's
    // word stands alone. Its pi is gone either way, so its pane is dead and is closed.
    for (let i = 0; snap.piGone && !howEnded(snap, live) && i < 10; i++) {
      await herd.clock.sleep(100);
      live = await herd.liveness.fresh(rec);
    }
    const exit = howEnded(snap, live) ?? (snap.piGone ? { code: null, signal: null, at: new Date(herd.clock.now()).toISOString(), inferred: true } : undefined);
    if (!exit) return {};
    herd.setState(rec, "exited");
    const error = `[pi_exited] pi in sheep ${rec.agentId} exited (${exitText(exit)}) before answering.`;
    for (const p of pendingPrompts(herd, rec)) await settle(herd, p, { status: "failed", error });
    const why = await closeAndConfirm(herd, rec);
    return why === undefined ? { exit: exitText(exit) } : { unclosed: why };
  });
}

/**
 * A sheep whose pane is gone: settle what it owed from its files, then forget it, unless its
 * worktree holds work: then the record stays, closed, so the work can still be landed.
 */
export function dropGone(herd: Herd, rec: AgentRecord): Promise<{ ids: string[]; kept?: string }> {
  return herd.exclusive(rec.agentId, async () => {
    if (herd.registry.agents.get(rec.agentId) !== rec || rec.state === "closed") return { ids: [] };
    await refresh(herd, rec).catch(() => undefined);
    for (const p of pendingPrompts(herd, rec)) await settle(herd, p, { status: "failed", error: `[pane_gone] the pane of ${rec.agentId} is gone.` });
    herd.unwatch(rec.agentId);
    await herd.opts.files.cleanup(rec.agentId).catch(() => undefined);
    herd.audit({ event: "prune", agentId: rec.agentId, label: rec.label });
    const kept = await tidyWorktree(herd, rec);
    if (kept === undefined) {
      herd.forget(rec);
      return { ids: [rec.agentId] };
    }
    herd.setState(rec, "closed");
    delete rec.activePromptId;
    return { ids: [rec.agentId], kept };
  });
}

/**
 * Closes a pane of ours on a path that must not fail (a failed start, a warm sheep, a record
 * caught mid-start): undefined once pane and pi are gone, else why not. A pane that would not go
 * stays the caller's to keep recorded, or nobody could ever close it.
 */
export async function closeAndConfirm(herd: Herd, rec: AgentRecord): Promise<string | undefined> {
  if (await herd.opts.runtime.close(rec.paneId, rec.agentId).catch(() => undefined)) herd.liveness.gone(rec.agentId);
  return confirmGone(herd, rec).then(
    () => undefined,
    (e: unknown) => errorText(e),
  );
}

/**
 * Files are removed only once nothing can write them again: the pane is gone (closing is
 * asynchronous in some multiplexers), and so is the pi that was in it, which a closed pane sends
 * SIGHUP and which still writes its status on its way out.
 */
export async function confirmGone(herd: Herd, rec: AgentRecord): Promise<void> {
  for (let i = 0; ; i++) {
    if ((await herd.liveness.fresh(rec))?.state === "gone") break;
    if (i === 19) throw new ShepherdError("runtime_error", `the pane ${rec.paneId} of ${rec.agentId} is still there after closing it; its files are kept.`);
    await herd.clock.sleep(100);
  }
  // Bounded: a pi that ignores its hangup is left to the pid witness, not waited for.
  for (let i = 0; i < 100 && herd.opts.files.running?.(rec.agentId) === true; i++) await herd.clock.sleep(20);
}
