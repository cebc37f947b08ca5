/**
 * The records across reloads and restarts: taking back what this shepherd may own, and telling
 * another live shepherd's sheep apart from an unknown id.
 */
import { closeAndConfirm, dropGone } from "./close.ts";
import type { Herd } from "../herd/herd.ts";
import { refresh } from "../prompts/ledger.ts";
import { closeWarmSheep, keepToClose } from "./warm-close.ts";
import type { DelegationRecord } from "../../ports/types.ts";

export interface AttachReport {
  /** Sheep of an earlier shepherd (or of this one before a reload) that are ours again. */
  adopted: string[];
  /** Adopted records whose panes were gone: marked and dropped. */
  pruned: string[];
  /** The adopted sheep that run: neither closed before nor pruned now (what "re-attached" counts). */
  live: string[];
  warnings: string[];
}

/**
 * Takes back the records this shepherd may own: its own from before a reload, and those of a
 * shepherd that no longer runs. Results are files, so a prompt sent before can still be waited for.
 */
export async function attach(herd: Herd): Promise<AttachReport> {
  const report: AttachReport = { adopted: [], pruned: [], live: [], warnings: [] };
  const { store, owner, files: host } = herd.opts;
  if (!store) return report;
  const { state, warnings } = await store.load();
  report.warnings.push(...warnings);
  const alive = herd.opts.ownerAlive ?? (() => true);
  // The spend of the records taken here goes with them (the totals survive a reload and a restart).
  const tallied = herd.tally.take(state.tallies ?? [], (o) => o === owner || !alive(o), herd.clock.now());
  /** Adopted sheep whose settled prompts a taken tally already counted. */
  const counted = new Set<string>();
  const ours = state.agents.filter((a) => a.owner === owner || !alive(a.owner));
  for (const rec of ours) {
    if (herd.registry.agents.has(rec.agentId) || herd.registry.warm.has(rec.agentId)) continue;
    if (rec.warm) {
      // A pool sheep of a shepherd that quit or reloaded: never prompted, so nothing is lost by closing it.
      if (await closeWarmSheep(herd, rec)) herd.letGo(rec.agentId);
      else keepToClose(herd, rec);
      continue;
    }
    if (rec.state === "closed" && rec.owner !== owner && !rec.worktree) {
      // A dead shepherd's closed sheep: nothing left to use, so the file lets go of it
      // instead of handing it from owner to owner forever. One that kept a worktree still
      // leads to work that can be landed, so it is adopted like a live one. What it spent still
      // counts: in its shepherd's tally, or (a file from before tallies) counted here.
      if (!tallied.has(rec.owner))
        herd.tally.countGone(
          state.prompts.filter((p) => p.agentId === rec.agentId),
          herd.clock.now(),
        );
      herd.letGo(rec.agentId);
      continue;
    }
    const from = rec.owner;
    if (tallied.has(from)) counted.add(rec.agentId);
    rec.owner = owner;
    herd.registry.agents.set(rec.agentId, rec);
    if (rec.state !== "closed") herd.audit({ event: "adopt", agentId: rec.agentId, label: rec.label, from });
    if (rec.state !== "closed") herd.watch(rec.agentId);
    report.adopted.push(rec.agentId);
  }
  const adopted = new Set(report.adopted);
  for (const p of state.prompts) {
    if (!adopted.has(p.agentId) || herd.registry.prompts.has(p.promptId)) continue;
    if (counted.has(p.agentId)) herd.tally.already([p]);
    herd.registry.prompts.set(p.promptId, p);
  }
  // A reservation a sheep's record names is that sheep's now (it started, even if its task never heard).
  const sheepKeys = new Set(state.agents.flatMap((a) => (a.ledgerKey !== undefined ? [a.ledgerKey] : [])));
  for (const d of state.delegations ?? []) {
    if (herd.registry.delegations.has(d.delegationId) || (d.owner !== owner && alive(d.owner))) continue;
    d.owner = owner;
    herd.registry.delegations.set(d.delegationId, d);
    if (!d.done) resume(herd, d, sheepKeys);
    delete d.reservations;
  }
  for (const id of report.adopted) {
    const rec = herd.registry.agents.get(id)!;
    if (rec.state === "closed" || rec.state === "starting") continue;
    if ((await herd.liveness.get(rec, 0))?.state === "gone") {
      // Gone while nobody watched: settle what it owed from its files, then drop it.
      report.pruned.push(...(await dropGone(herd, rec)).ids);
    } else {
      await refresh(herd, rec);
    }
  }
  // A record caught half-way through start: a sheep that did become ready is kept; any other
  // belonged to a start that can no longer finish.
  for (const id of report.adopted) {
    const rec = herd.registry.agents.get(id);
    if (rec?.state !== "starting") continue;
    const snap = await host.snapshot(rec.agentId);
    if (snap.ready && !snap.exited && !snap.piGone && (await herd.liveness.get(rec, 0))?.state === "alive") {
      herd.setState(rec, "idle");
      continue;
    }
    // A pane that would not close stays recorded (still starting): close or prune finds it later.
    if ((await closeAndConfirm(herd, rec)) !== undefined) continue;
    report.pruned.push(...(await dropGone(herd, rec)).ids);
  }
  report.live = report.adopted.filter((id) => {
    const rec = herd.registry.agents.get(id);
    return rec !== undefined && rec.state !== "closed";
  });
  await herd.persist();
  return report;
}

/**
 * A background delegation whose runner died with the shepherd before it was done: tasks already
 * prompted finish and are reported as usual (their sheep hold their budgets on their records);
 * those that had not started never will, and their reservations of the day are let go.
 */
function resume(herd: Herd, d: DelegationRecord, sheepKeys: ReadonlySet<string>): void {
  // A task that never got a sheep never will: what it reserved of the day goes, as its run would have let it go.
  for (const r of d.reservations ?? []) {
    if (d.items[r.item]?.agentId === undefined && !sheepKeys.has(r.key)) herd.spend.release({ key: r.key, budget: r.budget });
  }
  for (const item of d.items) {
    if (item.status !== undefined) continue;
    const prompt = item.promptId ? herd.registry.prompts.get(item.promptId) : undefined;
    if (prompt?.settled) {
      item.status = prompt.settled.status;
      if (prompt.settled.text !== undefined) item.text = prompt.settled.text;
      if (prompt.settled.error !== undefined) item.error = prompt.settled.error;
    } else if (!prompt) {
      item.status = "cancelled";
      item.error = item.promptId
        ? `[unknown_prompt] the prompt ${item.promptId} of this task was lost with its sheep.`
        : "[cancelled] the shepherd was reloaded or restarted before this task started; delegate it again.";
    }
  }
  if (d.mode === "chain") {
    for (const [i, item] of d.items.entries()) item.step = i + 1;
  }
  d.done = true;
}
