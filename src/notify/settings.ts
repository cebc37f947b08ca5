/**
 * The user's `notify` setting: the channels a notice goes to, several at once, each with the events
 * it wants. Read from the user's settings only (src/settings.ts lists it user-only): a repository
 * must never send the herd's news to a URL of its choosing.
 */
import { createHash } from "node:crypto";
import { HERD_EVENT_KINDS, type HerdEventKind } from "../ports/events.ts";

export type ChannelType = "desktop" | "webhook" | "ntfy" | "terminal" | "browser";
export const CHANNEL_TYPES: readonly ChannelType[] = ["desktop", "webhook", "ntfy", "terminal", "browser"];

export interface ChannelSettings {
  type: ChannelType;
  /** webhook and ntfy: where the POST goes (http or https). */
  url?: string;
  /** The events it wants; all when absent. */
  events?: HerdEventKind[];
  /** webhook only: "json" (default) or "slack" (a Slack-compatible `{text}` body). */
  format?: "json" | "slack";
}

export interface NotifySettings {
  channels: ChannelSettings[];
}

export const DEFAULT_NOTIFY: NotifySettings = { channels: [] };

/** The most channels one setting may list. */
export const MAX_CHANNELS = 16;
export const MAX_URL_CHARS = 2048;

const CHANNEL_KEYS = ["type", "url", "events", "format"];

/** Why a channel's URL is not one; undefined when it is. */
function urlProblem(v: unknown): string | undefined {
  if (typeof v !== "string" || v === "") return "a URL (http or https)";
  if (v.length > MAX_URL_CHARS) return `at most ${MAX_URL_CHARS} characters`;
  if (/[\u0000-\u0020\u007f-\u009f]/.test(v)) return "a URL without spaces or control characters";
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return "a URL (http or https)";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return `http or https, not ${u.protocol}`;
  // fetch refuses a URL with credentials: such a channel would fail every try for a day.
  if (u.username || u.password) return "a URL without user:password@ (put a token in the path or query)";
  return undefined;
}

/** Why a `notify` value is not one (hostile values refused, each with what is expected); undefined when it is. */
export function notifyProblem(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return 'an object {"channels": [...]}';
  for (const k of Object.keys(v)) if (k !== "channels") return `unknown key "${k}" (known: channels)`;
  const channels = (v as { channels?: unknown }).channels;
  if (channels === undefined) return undefined;
  if (!Array.isArray(channels)) return '"channels" is a list of channels';
  if (channels.length > MAX_CHANNELS) return `at most ${MAX_CHANNELS} channels`;
  for (const [i, c] of channels.entries()) {
    const at = `channel ${i + 1}`;
    if (typeof c !== "object" || c === null || Array.isArray(c)) return `${at} is not an object like {"type": "desktop"}`;
    const o = c as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!CHANNEL_KEYS.includes(k)) return `${at} has an unknown key "${k}" (known: ${CHANNEL_KEYS.join(", ")})`;
    if (typeof o.type !== "string" || !CHANNEL_TYPES.includes(o.type as ChannelType)) return `${at}: "type" must be one of ${CHANNEL_TYPES.join(", ")}`;
    const needsUrl = o.type === "webhook" || o.type === "ntfy";
    if (needsUrl) {
      const why = urlProblem(o.url);
      if (why) return `${at} (${o.type}): "url" must be ${why}`;
    } else if (o.url !== undefined) return `${at} (${o.type}) takes no "url"`;
    if (o.format !== undefined) {
      if (o.type !== "webhook") return `${at} (${o.type}) takes no "format" (only a webhook does)`;
      if (o.format !== "json" && o.format !== "slack") return `${at}: "format" must be "json" or "slack"`;
    }
    if (o.events !== undefined) {
      if (!Array.isArray(o.events) || o.events.length === 0) return `${at}: "events" must be a non-empty list of ${HERD_EVENT_KINDS.join(", ")}`;
      for (const e of o.events)
        if (typeof e !== "string" || !HERD_EVENT_KINDS.includes(e as HerdEventKind))
          return `${at}: unknown event ${JSON.stringify(String(e)).slice(0, 40)} (known: ${HERD_EVENT_KINDS.join(", ")})`;
      if (new Set(o.events).size !== o.events.length) return `${at}: an event is named twice in "events"`;
    }
  }
  return undefined;
}

/**
 * A channel's name in the outbox: its place, type and a hash of its URL, so a changed setting never
 * sends an old channel's notice to a new URL (its entries expire instead). The URL itself is never written.
 */
export function channelId(c: ChannelSettings, index: number): string {
  const hash = createHash("sha256")
    .update(c.url ?? "")
    .update("\0")
    .update(c.format ?? "")
    .digest("hex")
    .slice(0, 8);
  return `${index}-${c.type}-${hash}`;
}

/** Whether a channel wants an event of this kind. */
export function wants(c: ChannelSettings, kind: HerdEventKind): boolean {
  return c.events === undefined || c.events.includes(kind);
}
