/**
 * Worktrees of ours that no record knows: a shepherd killed while it started an isolated sheep made
 * the worktree and its branch but never recorded the sheep. Prune removes them (one holding work
 * only when forced); a worktree whose maker still runs is left alone, its start may be on its way.
 */
import { STALE_SPEC_MS } from "../../ports/sheep-files.ts";
import type { MarkedWorktree } from "../../ports/workspace.ts";
import type { Herd } from "../herd/herd.ts";
import { unlandedWork } from "./worktrees.ts";

/** Marked worktrees on this machine that no record holds and whose maker no longer runs. */
export async function leftoverWorktrees(herd: Herd): Promise<MarkedWorktree[]> {
  const marks = (await herd.opts.workspace?.marked?.().catch(() => [])) ?? [];
  if (marks.length === 0) return [];
  // By path: a resumed sheep takes over the worktree made for the sheep it continues.
  const held = new Set<string>();
  for (const r of [...herd.registry.agents.values(), ...herd.registry.warm.values()])
    if (r.worktree && r.worktree.host === undefined) held.add(r.worktree.path);
  const alive = herd.opts.ownerAlive ?? ((o: string) => o === herd.opts.owner);
  return marks.filter((m) => !held.has(m.worktree.path) && !alive(m.owner));
}

export interface LeftoverOutcome {
  removed: MarkedWorktree[];
  kept: { mark: MarkedWorktree; reason: string }[];
}

/** Removes each leftover worktree and its branch; one holding work stays unless force. */
export async function pruneLeftovers(herd: Herd, force: boolean): Promise<LeftoverOutcome> {
  const out: LeftoverOutcome = { removed: [], kept: [] };
  const ws = herd.opts.workspace;
  if (!ws) return out;
  for (const m of await leftoverWorktrees(herd)) {
    try {
      const why = force ? undefined : unlandedWork(await ws.inspect(m.worktree));
      if (why) {
        out.kept.push({ mark: m, reason: why });
        continue;
      }
      await ws.remove(m.worktree);
      herd.audit({ event: "prune", agentId: m.agentId, label: "(no record)" });
      out.removed.push(m);
    } catch (e) {
      out.kept.push({ mark: m, reason: `could not be checked or removed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 300) });
    }
  }
  return out;
}

/** A launch spec no launcher read, of a sheep no record knows: a start cut short between prepare and its pane. */
export interface LeftoverSpec {
  agentId: string;
  host?: string;
}

/**
 * Stale launch specs, here and on every host that answers: older than any start could hold one
 * (another shepherd's start on its way is younger), and of a sheep no record, warm or not, knows.
 */
export async function leftoverSpecs(herd: Herd): Promise<LeftoverSpec[]> {
  const found = (await herd.opts.files.staleSpecs?.(STALE_SPEC_MS).catch(() => [])) ?? [];
  return found.filter((s) => !herd.registry.agents.has(s.agentId) && !herd.registry.warm.has(s.agentId));
}

/** Removes each stale spec with every file its start wrote (pi never ran from it: nothing there is worth keeping). */
export async function pruneSpecs(herd: Herd): Promise<LeftoverSpec[]> {
  const removed: LeftoverSpec[] = [];
  for (const s of await leftoverSpecs(herd)) {
    const ok = await herd.opts.files.discard(s.agentId).then(
      () => true,
      () => false,
    );
    if (!ok) continue;
    herd.audit({ event: "prune", agentId: s.agentId, label: "(no record)" });
    removed.push(s);
  }
  return removed;
}

/** A pane on a host that this machine started a sheep in and that no record knows: a shepherd killed during a remote start. */
export interface LeftoverPane {
  agentId: string;
  host: string;
  paneId: string;
}

/** A shepherd that still runs may be recording its sheep right now: its starts' panes are left alone. */
export async function leftoverPanes(herd: Herd): Promise<LeftoverPane[]> {
  const found = (await herd.opts.runtime.hostPanes?.().catch(() => [])) ?? [];
  const alive = herd.opts.ownerAlive ?? ((o: string) => o === herd.opts.owner);
  return found
    .filter((p) => !herd.registry.agents.has(p.agentId) && !herd.registry.warm.has(p.agentId) && !alive(p.owner))
    .map((p) => ({ agentId: p.agentId, host: p.host, paneId: p.paneId }));
}

/** Closes each (its sheep's files there cleaned up as a close would); one that would not close is left for the next prune. */
export async function pruneHostPanes(herd: Herd): Promise<LeftoverPane[]> {
  const closed: LeftoverPane[] = [];
  for (const p of await leftoverPanes(herd)) {
    const ok = await herd.opts.runtime.close(p.paneId, p.agentId).then(
      (r) => r !== false,
      () => false,
    );
    if (!ok) continue;
    await herd.opts.files.cleanup(p.agentId).catch(() => undefined);
    herd.audit({ event: "prune", agentId: p.agentId, label: "(no record)" });
    closed.push(p);
  }
  return closed;
}

/** What starts cut short left, here and on every host that answers, that no record knows (read only: prune removes it). */
export async function leftovers(herd: Herd): Promise<{ specs: LeftoverSpec[]; panes: LeftoverPane[]; worktrees: MarkedWorktree[] }> {
  const [specs, panes, worktrees] = await Promise.all([leftoverSpecs(herd), leftoverPanes(herd), leftoverWorktrees(herd)]);
  return { specs, panes, worktrees };
}
