/**
 * Sheep that wait for you: blocked (a dialog or a question holds its turn), with a question not yet
 * answered, or with messages nobody has read. They are marked in the herd and counted in the tab's
 * title; with the page in the background, the browser's own notification says which sheep and
 * why, once per event (by the event's id), and only after the person allowed it (a button asks).
 * Another shepherd's sheep is told once each time it starts to wait, as this page reads its herd.
 */
import { asText, firstLine, h } from "./dom.js";

/** Why a sheep waits for you, or "" when it does not. */
export function attentionOf(s) {
  if (!s || s.state === "closed") return "";
  // A question says more than the blocked state it causes.
  const questions = Number(s.questions) || 0;
  if (questions > 0) return questions === 1 ? "asks you a question" : `asks you ${questions} questions`;
  if (s.state === "blocked") return "blocked";
  const unread = Number(s.unread) || 0;
  if (unread > 0) return unread === 1 ? "has a message nobody read" : `has ${unread} messages nobody read`;
  return "";
}

/** The tab's title: the count of sheep waiting first, so it shows in a crowded tab bar. */
export function titleWith(waiting, base) {
  return waiting > 0 ? `(${waiting}) ${base}` : base;
}

/**
 * The tag of a sheep's notifications: the page's own and the `notify` setting's browser channel
 * (notices.js) tell of the same question, and one replaces the other instead of showing twice.
 */
export function sheepTag(agentId) {
  return `pi-shepherd-sheep:${String(agentId).slice(0, 64)}`;
}

/** Events told once: a reconnect replays what the shepherd still holds, with the same ids. */
const told = new Set();

/** What an event asks of the person, or undefined: a sheep blocked, or a question asked. */
function eventAsk(type, data) {
  if (!data || typeof data !== "object") return undefined;
  const who = asText(data.label) || asText(data.agentId);
  if (type === "blocked") return { who, why: "is blocked: it waits for you" };
  if (type === "message" && data.message?.kind === "question") return { who, why: `asks: ${firstLine(asText(data.message.text), 160)}` };
  return undefined;
}

/**
 * A question held for a reply blocks the sheep too: its two events (the message, then the state)
 * come within moments and make one notification, the question's. What one sheep asks within this
 * long is told together.
 */
const GATHER_MS = 600;
const pending = new Map();

/** Shows a notification for an event that asks for the person, when the page is in the background and notifications are allowed. */
export function notifyEvent(type, data, id, labelOf) {
  const ask = eventAsk(type, data);
  if (!ask) return;
  const key = `${type}:${id ?? ""}:${asText(data.agentId)}:${asText(data.message?.messageId)}`;
  if (told.has(key)) return;
  told.add(key);
  if (!document.hidden || typeof Notification !== "function" || Notification.permission !== "granted") return;
  const agentId = asText(data.agentId);
  const held = pending.get(agentId);
  if (held) {
    // The question says more than "blocked".
    if (type === "message") held.ask = ask;
    return;
  }
  const entry = { ask, key };
  pending.set(agentId, entry);
  setTimeout(() => {
    pending.delete(agentId);
    show(agentId, labelOf(agentId) || entry.ask.who, entry.ask.why, sheepTag(agentId));
  }, GATHER_MS);
}

function show(agentId, who, why, tag, href = `#/sheep/${encodeURIComponent(agentId)}`) {
  try {
    const n = new Notification(`${who} ${why.startsWith("asks") ? "asks you" : "waits for you"}`, { body: `${who} ${why}`, tag });
    n.onclick = () => {
      window.focus();
      location.hash = href;
      n.close();
    };
  } catch {
    // a browser that shows notifications only from a service worker: the title still counts
  }
}

/** Other shepherds' sheep that waited at the last read, each as `shepherd:sheep:why`. */
let siblingsSeen = new Set();

/**
 * Other shepherds' sheep that wait for the person, as this page last read them (their events do not
 * reach it, shepherds.js): each one that waits anew, or for a new reason, is told once, with the
 * page in the background and notifications allowed. `waiting`: [{shepherdId, agentId, label, why}].
 */
export function notifySiblings(waiting) {
  const before = siblingsSeen;
  siblingsSeen = new Set(waiting.map((w) => `${w.shepherdId}:${w.agentId}:${w.why}`));
  if (!document.hidden || typeof Notification !== "function" || Notification.permission !== "granted") return;
  for (const w of waiting) {
    if (before.has(`${w.shepherdId}:${w.agentId}:${w.why}`)) continue;
    const href = `#/shepherd/${encodeURIComponent(w.shepherdId)}/sheep/${encodeURIComponent(w.agentId)}`;
    show(w.agentId, `${w.label || w.agentId} (pi ${w.shepherdId})`, w.why, sheepTag(w.agentId), href);
  }
}

/** A button that asks for the browser's permission to notify; none when it was answered or there is no Notification. */
export function notifyButton() {
  if (typeof Notification !== "function" || Notification.permission !== "default") return h("span", { hidden: true });
  const button = h(
    "button",
    {
      type: "button",
      class: "secondary small notify-ask",
      onclick: async () => {
        const answer = await Notification.requestPermission();
        button.hidden = answer !== "default";
      },
    },
    "Notify me when a sheep waits",
  );
  return button;
}
