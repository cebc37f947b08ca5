import { printable } from "../domain/printable.ts";
import { spendShort } from "../domain/budget.ts";
import type { WarmCount } from "../core/shepherd.ts";
import type { HerdView } from "../core/prompts/views.ts";
import { ageText, warmText } from "./format.ts";

/** `label · agent`, or the label alone when it is the agent's own name; printable, as drawn. */
export function sheepName(label: string | undefined, agent: string | undefined): string {
  if (!label) return printable(agent ?? "");
  return printable(agent && agent !== label ? `${label} · ${agent}` : label);
}

/**
 * `label · agent · state 12s`: one sheep as the widget and the progress of wait and delegate all
 * show it, from the same view and the same clock (`since`, read at the moment of drawing).
 */
export function sheepStateText(v: { label?: string; agent?: string; host?: string; state: string; since?: string | undefined }, now: number): string {
  return `${sheepName(v.label, v.agent)}${v.host !== undefined ? ` @${v.host}` : ""} · ${stateClock(v.state, v.since, now)}`;
}

/** `working 12s`: a state and how long its clock has run at `now`. */
export function stateClock(state: string, since: string | undefined, now: number): string {
  return since ? `${state} ${ageText(now - Date.parse(since))}` : state;
}

/** A sheep's text on one line of the widget: printable, its whitespace runs made one space, cut at `max`. */
const oneLine = (s: string, max: number) => {
  const flat = printable(s).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * The herd widget: one line per live sheep, plain text (RPC clients get it verbatim). A sheep
 * with results still on their way to the conversation (notify, background) shows how many; its
 * latest progress message and a question it waits on follow on lines of their own; ⎇ marks a
 * sheep in a worktree of its own, 🔒 a sandboxed one. Everything a sheep or an agent file wrote
 * (labels, names, messages) is drawn printable.
 */
export function herdWidgetLines(herd: HerdView[], now: number, warm?: Record<string, WarmCount>): string[] | undefined {
  const live = herd.filter((s) => s.state !== "closed");
  const counted = warm ? warmText(warm) : undefined;
  const pool = counted === undefined ? undefined : printable(counted);
  if (live.length === 0 && !pool) return undefined;
  const lines = [`🐑 herd (${live.length})${pool ? ` · warm: ${pool}` : ""}`];
  for (const s of live) {
    const queued = s.queued ? ` +${s.queued} queued` : "";
    const owed = s.undelivered ? ` · 🔔 ${s.undelivered} to report` : "";
    // ⎇ marks a sheep in a worktree of its own: its edits are not in your checkout; 🔒 one in a sandbox.
    const name = sheepName(s.label, s.agent);
    const label = printable(s.label);
    const marks = `${s.worktree ? " ⎇" : ""}${s.sandboxed ? " 🔒" : ""}`;
    const marked = marks ? `${label}${marks}${name.slice(label.length)}` : name;
    const on = s.host !== undefined ? ` @${s.host}` : "";
    const spend = spendShort(s.spent, s.budget);
    lines.push(`  ${marked}${on} · ${stateClock(s.state, s.since, now)}${queued}${owed}${spend ? ` · ${spend}` : ""}`);
    if (s.asking) lines.push(`    ? ${printable(s.asking.messageId)}: ${oneLine(s.asking.text, 80)}`);
    else if (s.progress) lines.push(`    ↳ ${oneLine(s.progress, 80)}`);
  }
  return lines;
}
