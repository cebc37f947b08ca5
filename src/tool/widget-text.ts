import type { SheepView } from "../core/types.js";
import { ageText } from "./format.js";

/** `label · agent`, or the label alone when it is the agent's own name. */
export function sheepName(label: string | undefined, agent: string | undefined): string {
  if (!label) return agent ?? "";
  return agent && agent !== label ? `${label} · ${agent}` : label;
}

/**
 * `label · agent · state 12s`: one sheep as the widget and the progress of wait and delegate all
 * show it, from the same view and the same clock (`since`, read at the moment of drawing).
 */
export function sheepStateText(v: { label?: string; agent?: string; state: string; since?: string | undefined }, now: number): string {
  return `${sheepName(v.label, v.agent)} · ${stateClock(v.state, v.since, now)}`;
}

/** `working 12s`: a state and how long its clock has run at `now`. */
export function stateClock(state: string, since: string | undefined, now: number): string {
  return since ? `${state} ${ageText(now - Date.parse(since))}` : state;
}

/** The herd widget: one line per live sheep, plain text (RPC clients get it verbatim). */
export function herdWidgetLines(herd: SheepView[], now: number): string[] | undefined {
  const live = herd.filter((s) => s.state !== "closed");
  if (live.length === 0) return undefined;
  return [`🐑 herd (${live.length})`, ...live.map((s) => `  ${sheepStateText(s, now)}`)];
}
