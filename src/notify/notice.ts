/**
 * One notice from the events of one sheep (or one host): it names the sheep, its host, what it
 * needs and how to act (the panel's link when the panel runs, and the `/shepherd` line). A sheep's
 * words are made printable and cut here, whatever channel carries them.
 */
import { printable } from "../domain/printable.ts";
import type { HerdEvent, HerdEventKind } from "../ports/events.ts";

/** The most characters of one event's text in a notice. */
export const NOTICE_TEXT_CHARS = 300;
/** The most events one notice lists; the rest are counted. */
export const NOTICE_EVENTS = 8;

export interface Notice {
  /** The same on a retry, so a receiver can drop a copy. */
  id: string;
  /** The kind of its first event. */
  event: HerdEventKind;
  agentId?: string;
  label?: string;
  host: string;
  /** One line: who and what. */
  title: string;
  /** The lines: each event, then how to act. */
  text: string;
  /** When its newest event happened (ISO). */
  at: string;
  /** The panel's page (never its token), when the panel runs. */
  link?: string;
}

/** Events told only by their count under a channel's rate limit. */
export interface Held {
  events: number;
  sources: number;
}

const NEEDS: Record<HerdEventKind, string> = {
  blocked: "waits on a dialog",
  question: "asks a question",
  answer: "has an answer nobody received",
  failed: "failed",
  host: "host changed",
  budget: "reached a budget line",
};

/** A sheep's (or host's) words as one printable line, at most `max` characters. */
export function cutLine(text: string, max = NOTICE_TEXT_CHARS): string {
  const flat = printable(text).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** How a person acts on one event, as they type it at /shepherd. */
function act(e: HerdEvent): string | undefined {
  const who = e.agentId;
  switch (e.kind) {
    case "question":
      return who && e.messageId ? `/shepherd reply ${who} ${e.messageId} <your answer>` : undefined;
    case "blocked":
      return who ? `/shepherd read ${who} --source screen` : undefined;
    case "answer":
      return who ? `/shepherd wait ${who}` : undefined;
    case "failed":
    case "budget":
      return who ? `/shepherd status ${who}` : undefined;
    case "host":
      return "/shepherd doctor";
  }
}

export function buildNotice(id: string, events: readonly HerdEvent[], o: { link?: string; held?: Held } = {}): Notice {
  const first = events[0]!;
  const host = cutLine(first.host, 64);
  const label = first.label !== undefined ? cutLine(first.label, 64) : undefined;
  const who = first.agentId ? `${label ?? first.agentId} (${first.agentId}) on ${host}` : `host ${host}`;
  const kinds = [...new Set(events.map((e) => e.kind))];
  const title = cutLine(`pi-shepherd: ${who} ${kinds.map((k) => NEEDS[k]).join(", ")}`, 200);
  const lines = events.slice(0, NOTICE_EVENTS).map((e) => `- ${NEEDS[e.kind]}: ${cutLine(e.text)}`);
  if (events.length > NOTICE_EVENTS) lines.push(`- and ${events.length - NOTICE_EVENTS} more of ${label ?? host}`);
  const steps = [...new Set(events.map(act).filter((s): s is string => s !== undefined))].slice(0, 4);
  for (const s of steps) lines.push(`Act: ${s}`);
  if (o.link) lines.push(`Panel: ${o.link}`);
  if (o.held && o.held.events > 0) lines.push(`${o.held.events} more (of ${o.held.sources} sheep or hosts), held by the rate limit: /shepherd herd`);
  const at = new Date(Math.max(...events.map((e) => e.at))).toISOString();
  return {
    id,
    event: first.kind,
    ...(first.agentId ? { agentId: first.agentId } : {}),
    ...(label !== undefined ? { label } : {}),
    host,
    title,
    text: lines.join("\n"),
    at,
    ...(o.link ? { link: o.link } : {}),
  };
}
