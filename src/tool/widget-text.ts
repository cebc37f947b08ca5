import type { AgentStatus } from "../core/types.js";
import { ageText } from "./format.js";

/** The herd widget: one line per live sheep, plain text (RPC clients get it verbatim). */
export function herdWidgetLines(herd: (AgentStatus & { promptSubmittedAt?: string })[], now: number): string[] | undefined {
  const live = herd.filter((s) => s.state !== "closed");
  if (live.length === 0) return undefined;
  const lines = [`🐑 herd (${live.length})`];
  for (const s of live) {
    const since = s.promptSubmittedAt ? ` ${ageText(now - Date.parse(s.promptSubmittedAt))}` : "";
    // ⎇ marks a sheep in a worktree of its own: its edits are not in your checkout.
    lines.push(`  ${s.label}${s.worktree ? " ⎇" : ""} · ${s.agent} · ${s.state}${s.state === "working" ? since : ""}`);
  }
  return lines;
}
