/** The memory the warm pool's sheep hold, against the room `memoryMb` gives sheep that come back. */
import type { Herd } from "../herd/herd.ts";
import { WARM_SHEEP_MB } from "../../domain/bounds.ts";

/** What the pool's sheep hold now, in MB: each pi's resident memory where the host reads it, else the estimate. */
export async function poolMb(herd: Herd): Promise<number> {
  const sizes = await Promise.all([...herd.registry.warm.keys()].map((id) => residentMb(herd, id)));
  return sizes.reduce((a, b) => a + b, 0);
}

export async function residentMb(herd: Herd, agentId: string): Promise<number> {
  const kb = await herd.opts.files.residentKb?.(agentId).catch(() => undefined);
  return kb === undefined ? WARM_SHEEP_MB : kb / 1024;
}
