/** What a sheep needs, told to the person's channels (ports/events.ts) through the herd's sink. */
import { LOCAL_HOST } from "../../domain/hosts.ts";
import type { HerdEvent, HerdEventSink } from "../../ports/events.ts";
import type { AgentRecord } from "../../ports/types.ts";

export type PublishedSheep = Pick<AgentRecord, "agentId" | "label" | "host"> | undefined;
export type PublishInput = Omit<HerdEvent, "at" | "host" | "agentId" | "label"> & { host?: string };

/** A sink that throws loses its event, never the herd's work. */
export function publishTo(sink: HerdEventSink | undefined, now: number, rec: PublishedSheep, event: PublishInput): void {
  if (!sink) return;
  try {
    sink({ ...event, at: now, host: event.host ?? rec?.host ?? LOCAL_HOST, ...(rec ? { agentId: rec.agentId, label: rec.label } : {}) });
  } catch {}
}
