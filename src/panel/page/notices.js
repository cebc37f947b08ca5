/**
 * The shepherd's notices (the `notify` setting's "browser" channel): shown with the browser's
 * Notification API, and only once the person allowed it (attention.js's one button asks). A notice's title and
 * body are plain text to the Notification API; nothing of them is read as markup.
 */
import { sheepTag } from "./attention.js";

const supported = () => typeof Notification !== "undefined";

/** One notice of the event stream, when the person allowed them. */
export function showNotice(data) {
  if (!supported() || Notification.permission !== "granted") return;
  if (!data || typeof data !== "object" || typeof data.title !== "string") return;
  const body = typeof data.text === "string" ? data.text.slice(0, 1000) : "";
  // One notification per sheep: this notice replaces what the page's own attention showed for it
  // (attention.js, the same tag), and a retried notice (the same id) replaces itself.
  const tag = typeof data.agentId === "string" ? sheepTag(data.agentId) : typeof data.id === "string" ? data.id.slice(0, 64) : undefined;
  new Notification(data.title.slice(0, 200), { body, ...(tag ? { tag } : {}) });
}
