/** Closing a warm sheep: by the pool, or at attach for a dead shepherd's pool. */
import { closeAndConfirm } from "./close.ts";
import type { Herd } from "../herd/herd.ts";
import type { AgentRecord } from "../../ports/types.ts";

/**
 * Closes a warm sheep's pane and removes its files: one that never had a prompt keeps nothing. Its record is the caller's to drop (this pool's, or a dead shepherd's found at attach),
 * but only when this says the pane is gone: a forgotten pane would run on with nobody to close it.
 */
export async function closeWarmSheep(herd: Herd, rec: AgentRecord): Promise<boolean> {
  // As any close: the files go once the pane and its pi are gone. A pane still there (the
  // multiplexer stopped answering) keeps them, and its record, for another try.
  if ((await closeAndConfirm(herd, rec)) !== undefined) return false;
  herd.unwatch(rec.agentId);
  // One that came back from a task keeps what its tasks left (their conversations, evidence), as a closed sheep does.
  if (rec.renewed) await herd.opts.files.cleanup(rec.agentId).catch(() => undefined);
  else await herd.opts.files.discard(rec.agentId).catch(() => undefined);
  return true;
}

/** A warm sheep whose pane could not be closed: never handed out, closed again by the pool's next pass or at quit. */
export function keepToClose(herd: Herd, rec: AgentRecord): void {
  herd.setState(rec, "exited");
  rec.owner = herd.opts.owner;
  herd.registry.warm.set(rec.agentId, rec);
}
