/**
 * Building the page's nodes. Every text a sheep, a repository or the shepherd sends goes in as a
 * text node (textContent), never as markup: nothing in the page parses a text as HTML, and no
 * attribute is set from a sheep's text but inert ones (title, aria-label, datetime, data-*).
 */

/** Attributes that load, run or style something: never set through h(). */
const REFUSED = new Set(["src", "srcdoc", "style", "action", "formaction", "xlink:href"]);

/**
 * An element with attributes, listeners (`onclick`: a function, never a text) and children
 * (nodes, or strings as text). A link goes only to a place in the page (`#…`).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    const lower = name.toLowerCase();
    if (lower.startsWith("on")) {
      if (typeof value !== "function") throw new TypeError(`h(): ${name} takes a function`);
      el.addEventListener(lower.slice(2), value);
    } else if (REFUSED.has(lower) || (lower === "href" && !String(value).startsWith("#"))) {
      throw new TypeError(`h(): ${name}=${JSON.stringify(String(value).slice(0, 40))} is not set by the page`);
    } else if (lower === "class") el.className = value;
    // What a person reads in a tooltip or hears read out shows its control characters too.
    else if (lower === "title" || lower === "aria-label") el.setAttribute(name, visible(value));
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/**
 * Characters a text cannot show: C0 but tab and newline, DEL, C1, and the bidi marks, embeddings,
 * overrides and isolates, which reorder what comes after them (a file `evil\u202Egpj.exe` read
 * as `exe.jpg`, the counts after it reversed).
 */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text with each control character shown as its code point, `⟨U+202E⟩`: seen, never obeyed. */
export function visible(text) {
  return String(text).replace(CONTROLS, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/** Appends nodes and strings (as text nodes, their control characters shown); arrays are flattened, empty values skipped. */
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(visible(c)));
  }
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * Makes `nodes` the element's children, in order, moving only the ones not in their place. A
 * list redrawn on every event keeps its kept items where they are: a node taken out of the page,
 * even to be put back at once, loses the focus, and the keys a person is typing into a reply box
 * in it would go to the page instead.
 */
export function arrange(el, nodes) {
  // What goes is taken out first: a kept node after a replaced one then need not move.
  const keep = new Set(nodes);
  for (const child of [...el.childNodes]) if (!keep.has(child)) child.remove();
  nodes.forEach((node, i) => {
    const at = el.childNodes[i];
    if (at !== node) el.insertBefore(node, at ?? null);
  });
  return el;
}

/**
 * A form's submit, one at a time: while one is on its way its submit buttons are disabled and a
 * second submit (a second click, Ctrl+Enter held or pressed again) is dropped, so nothing is sent twice.
 */
export function oneAtATime(form, run) {
  let busy = false;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (busy) return;
    busy = true;
    const buttons = [...form.querySelectorAll("button[type=submit]")];
    for (const b of buttons) b.disabled = true;
    try {
      await run(e);
    } finally {
      busy = false;
      for (const b of buttons) b.disabled = false;
    }
  });
  return form;
}

/** A value shown as text whatever it is: a string as it is, anything else as JSON. */
export function asText(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The first line of a text, cut to `max` characters. */
/**
 * What the page says when a prompt is refused: a busy sheep's refusal names the page's own
 * buttons (the API's words, deliverAs "steer"/"followUp", are for programs); anything else as sent.
 */
export function promptRefusalText(code, label, fallback) {
  if (code !== "prompt_pending") return fallback;
  return `${label} is still working on a prompt. Choose Steer (into its running turn) or Follow-up (queued behind it) and Send again, or wait for its answer.`;
}

export function firstLine(text, max = 120) {
  const line = asText(text).split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** 1234 → "1.2k", 2_500_000 → "2.5M". */
export function tokens(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "–";
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A cost in dollars, or a dash when pi reports none. */
export function cost(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "–";
  if (n === 0) return "$0";
  return n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

/** How long since an ISO time, as "4s", "3m 12s", "2h 05m", "3d 4h". */
export function elapsed(since, now = Date.now()) {
  const t = Date.parse(since);
  if (!Number.isFinite(t)) return "–";
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return `${hours}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** A <time> that counts up from `since`; the page's one ticker keeps every one of them current. */
export function since(iso) {
  const t = h("time", { class: "since", datetime: asText(iso), "data-since": asText(iso), title: asText(iso) });
  t.textContent = elapsed(iso);
  return t;
}

/** A clock time of an ISO time, in the person's own zone. */
export function clock(iso) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return "";
  return new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function tick(root = document) {
  const now = Date.now();
  for (const t of root.querySelectorAll("time[data-since]")) t.textContent = elapsed(t.dataset.since, now);
}

const STATES = new Set(["starting", "idle", "working", "blocked", "exited", "closed"]);

/** A sheep's state as a badge; only a known state becomes a class (the state is the server's text). */
export function stateBadge(state) {
  const s = asText(state);
  return h("span", { class: STATES.has(s) ? `badge state-${s}` : "badge" }, s || "unknown");
}
