/** The one line a quitting shepherd leaves on stderr when it keeps sheep running. */
import type { KeptAtQuit, QuitOutcome } from "../core/shepherd.ts";
import { oneLine } from "../domain/labels.ts";

function why(k: KeptAtQuit): string {
  if (k.unread !== undefined) return "its files could not be read";
  if (k.working.length > 0) return `working on ${k.working.join(", ")}`;
  return `result of ${k.unreceived.join(", ")} not received`;
}

/** Undefined when every sheep was closed: nothing to say beyond what the audit log holds. */
export function quitText(q: QuitOutcome): string | undefined {
  if (q.kept.length === 0 && q.failed.length === 0) return undefined;
  const parts: string[] = [];
  if (q.kept.length > 0) {
    const each = q.kept.map((k) => `${oneLine(k.label)} (${k.agentId}, ${why(k)})`).join(", ");
    parts.push(`left ${q.kept.length} sheep running for the next shepherd on this agent dir to take back: ${each}`);
  }
  if (q.closed.length > 0) parts.push(`closed ${q.closed.length} idle`);
  if (q.failed.length > 0) parts.push(`could not close ${q.failed.map((f) => `${oneLine(f.label)} (${f.agentId}): ${oneLine(f.error)}`).join(", ")}`);
  return `pi-shepherd: ${parts.join("; ")}.`;
}
