/**
 * What the herd tells a person who walked away (issue 35): one typed event per happening, published
 * by the core where it learns of it and carried by an adapter (src/notify) to the person's channels.
 * The core knows nothing of those channels; an event is plain data.
 */

/** The kinds of event, as the `notify` setting's `events` names them. */
export type HerdEventKind = "blocked" | "question" | "answer" | "failed" | "host" | "budget";
export const HERD_EVENT_KINDS: readonly HerdEventKind[] = ["blocked", "question", "answer", "failed", "host", "budget"];

export interface HerdEvent {
  kind: HerdEventKind;
  /**
   * The same for the same happening, however often the core sees it (a question's message id, a
   * prompt's id): the outbox keeps one notice per key, so a sweep that looks again sends nothing twice.
   */
  key: string;
  /** The sheep it is about; none for a host's event. */
  agentId?: string;
  label?: string;
  /** The machine: a host's name, or "local". */
  host: string;
  /** What happened or what is needed, in a few words; a sheep's own words are cut and made printable where a notice is built. */
  text: string;
  /** When, in ms since the epoch (the core's clock). */
  at: number;
  /** The question to reply to, when the event is one. */
  messageId?: string;
  promptId?: string;
}

/** Where the core publishes its events; must not throw, and must not wait. */
export type HerdEventSink = (event: HerdEvent) => void;
