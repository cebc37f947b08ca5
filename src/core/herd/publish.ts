/** What a sheep needs, told to the person's channels (ports/events.ts) through the herd's sink. */
import { LOCAL_HOST } from "../../domain/hosts.ts";
import { type Budget, spendText } from "../../domain/budget.ts";
import type { AuditInput } from "../../ports/audit.ts";
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

/**
 * A budget's warning or limit, as the audit log tells it, for the person's channels too: one notice per
 * sheep and kind, and for the day one per kind and day (every refused start of a day is one notice).
 */
export function budgetNotice(e: AuditInput, day: string): PublishInput | undefined {
  if (e.event !== "budget-warning" && e.event !== "budget-exceeded") return undefined;
  const what = e.event === "budget-warning" ? "at its warning line" : e.reserved ? "refused a start" : "at its limit";
  const whose = e.scope === "day" ? "the herd's daily budget" : "its budget";
  const spent = !e.spent
    ? ""
    : "outputTokens" in e.spent
      ? spendText(e.spent, e.budget as Budget | undefined)
      : `${e.spent.tokens} tokens, $${e.spent.costUsd}`;
  const key = `budget:${e.event}:${e.scope === "day" ? `day:${day}` : (e.agentId ?? "?")}`;
  return { kind: "budget", key, text: `${whose} is ${what}${spent ? `: spent ${spent}` : ""}` };
}
