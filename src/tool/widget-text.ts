import type { HerdView } from "../core/views.js";
import { ageText } from "./format.js";

const oneLine = (s: string, max: number) => {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * The herd widget: one line per live sheep, plain text (RPC clients get it verbatim). A sheep
 * with results still on their way to the conversation (notify, background) shows how many; its
 * latest progress message and a question it waits on follow on lines of their own.
 */
export function herdWidgetLines(herd: HerdView[], now: number): string[] | undefined {
  const live = herd.filter((s) => s.state !== "closed");
  if (live.length === 0) return undefined;
  const lines = [`🐑 herd (${live.length})`];
  for (const s of live) {
    const since = s.promptSubmittedAt ? ` ${ageText(now - Date.parse(s.promptSubmittedAt))}` : "";
    const queued = s.queued?.length ? ` +${s.queued.length} queued` : "";
    const owed = s.undelivered ? ` · 🔔 ${s.undelivered} to report` : "";
    // ⎇ marks a sheep in a worktree of its own: its edits are not in your checkout.
    lines.push(`  ${s.label}${s.worktree ? " ⎇" : ""} · ${s.agent} · ${s.state}${s.state === "working" ? since : ""}${queued}${owed}`);
    if (s.asking) lines.push(`    ? ${s.asking.messageId}: ${oneLine(s.asking.text, 80)}`);
    else if (s.progress) lines.push(`    ↳ ${oneLine(s.progress, 80)}`);
  }
  return lines;
}
