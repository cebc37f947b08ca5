/**
 * A sheep's live terminal in its page: @xterm/xterm (served by the shepherd from its package) fed by
 * GET …/terminal, a stream of the pane's raw bytes (its screen first, then what its program writes).
 * Read-only until the person ticks "Type into this sheep": only then do keys typed in the terminal
 * go, in order and a bounded batch at a time, to POST …/terminal, which types them into that sheep's
 * own pane. A stream that ends while the sheep runs is opened again (the screen redrawn afresh).
 * Another shepherd's sheep's terminal is the same, through this panel's route to that shepherd.
 */
import { ApiError, get, post, sheepPath, withSession } from "./api.js";
import { fill, h } from "./dom.js";
import { Terminal } from "/assets/xterm.mjs";

/** Keys sent in one request at most (the shepherd's bound); more wait for the next. */
const MAX_KEYS = 4096;
const RETRY_MS = 1000;
/** How long the page waits before asking again for a sheep whose host does not answer (its link reconnects by itself). */
const HOST_RETRY_MS = 3000;

const nonce = document.querySelector('meta[name="pi-shepherd-style-nonce"]')?.getAttribute("content") ?? "";

/**
 * xterm writes the sizes it measures into <style> elements it makes; the page's policy lets a style
 * element apply only with this answer's nonce, so each one is given it as it is made.
 */
function allowStyles() {
  if (document.createElement.piShepherdNonce) return;
  const make = document.createElement.bind(document);
  const nonced = (name, options) => {
    const el = make(name, options);
    if (String(name).toLowerCase() === "style") el.nonce = nonce;
    return el;
  };
  nonced.piShepherdNonce = true;
  document.createElement = nonced;
  if (!document.querySelector('link[href="/assets/xterm.css"]')) {
    const link = make("link");
    link.rel = "stylesheet";
    link.href = "/assets/xterm.css";
    document.head.append(link);
  }
}

export class SheepTerminal {
  /** `path`: the sheep's route with `rest` after it, on this panel or through it on another shepherd's (sheep.js). */
  constructor(agentId, say, path = (rest) => sheepPath(agentId, rest)) {
    this.agentId = agentId;
    this.say = say;
    this.path = path;
    this.disposed = false;
    this.term = undefined;
    this.abort = undefined;
    this.timer = undefined;
    this.queue = "";
    this.sending = false;
    this.ended = false;
    allowStyles();
    this.typing = h("input", { type: "checkbox", id: "term-typing", onchange: () => this.setTyping(this.typing.checked) });
    this.note = h("p", { class: "muted small term-note", role: "status" });
    this.screen = h("div", { class: "term-screen", "aria-label": "Terminal" });
    this.el = h(
      "section",
      { class: "panel-box term-box", "aria-labelledby": "h-term" },
      h(
        "div",
        { class: "term-head" },
        h("h3", { id: "h-term" }, "Terminal"),
        h("label", { class: "term-toggle", for: "term-typing" }, this.typing, " Type into this sheep"),
      ),
      this.screen,
      this.note,
    );
  }

  /** Opens the stream (again); a sheep whose pane is gone says so instead. */
  async open() {
    if (this.disposed || this.ended) return;
    clearTimeout(this.timer);
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    let res;
    try {
      res = await fetch(this.path("/terminal"), {
        credentials: "same-origin",
        cache: "no-store",
        headers: withSession({ Accept: "application/octet-stream" }),
        signal: abort.signal,
      });
    } catch {
      if (this.abort === abort) this.retry("The shepherd does not answer: reconnecting…");
      return;
    }
    if (!res.ok || !res.body) {
      let text = `the terminal answered ${res.status}`;
      let code;
      try {
        const data = await res.json();
        if (typeof data?.message === "string") text = data.message;
        code = data?.code;
      } catch {
        // the status says enough
      }
      // A remote sheep's host that does not answer now is asked again: its link comes back by itself.
      if (code === "host_unreachable") {
        this.retry(`No terminal for now: ${text}`, HOST_RETRY_MS);
        return;
      }
      // A pane that cannot be streamed (closed, not ours, a runtime without a stream) is not asked again.
      this.stop(`No terminal: ${text}`);
      return;
    }
    const cols = Number(res.headers.get("x-terminal-cols")) || 80;
    const rows = Number(res.headers.get("x-terminal-rows")) || 24;
    this.draw(cols, rows);
    fill(this.note, this.typing.checked ? "Live. Keys typed here go to this sheep's pane." : "Live, read-only. Tick “Type into this sheep” to type.");
    this.screen.dataset.state = "live";
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.abort !== abort) break;
        this.term.write(value);
      }
    } catch {
      // ended under the read: told below
    }
    if (this.abort === abort) await this.afterEnd();
  }

  /** The stream ended: a sheep that closed or exited has no terminal to open again (so none is asked for). */
  async afterEnd() {
    let detail;
    try {
      detail = await get(this.path(""));
    } catch {
      detail = undefined;
    }
    if (this.disposed || this.ended) return;
    if (detail?.state === "closed" || detail?.state === "exited") this.stop("Its pane is closed: no terminal.");
    else this.retry("The stream ended: reconnecting…");
  }

  /** A fresh terminal of the pane's size: the stream begins with the whole screen. */
  draw(cols, rows) {
    if (this.term && this.term.cols === cols && this.term.rows === rows) {
      this.term.reset();
      return;
    }
    this.term?.dispose();
    fill(this.screen);
    this.term = new Terminal({ cols, rows, scrollback: 1000, fontSize: 13, disableStdin: !this.typing.checked, cursorBlink: false });
    this.term.open(this.screen);
    this.term.onData((data) => this.type(data));
  }

  retry(text, ms = RETRY_MS) {
    if (this.disposed || this.ended) return;
    this.screen.dataset.state = "lost";
    fill(this.note, text);
    this.timer = setTimeout(() => this.open(), ms);
  }

  /** The sheep closed, or its pane cannot be streamed: said once, not asked again. */
  stop(text) {
    this.ended = true;
    this.abort?.abort();
    this.abort = undefined;
    clearTimeout(this.timer);
    this.screen.dataset.state = "ended";
    fill(this.note, text);
  }

  setTyping(on) {
    if (!this.term) return;
    this.term.options.disableStdin = !on;
    if (on) this.term.focus();
    fill(this.note, on ? "Keys typed here go to this sheep's pane." : "Read-only: keys typed here go nowhere.");
  }

  /** Keys in the order typed; one request at a time, each at most MAX_KEYS characters. */
  type(data) {
    if (!this.typing.checked || this.ended) return;
    this.queue += data;
    if (!this.sending) this.flush();
  }

  async flush() {
    this.sending = true;
    try {
      while (this.queue && !this.disposed) {
        const chars = [...this.queue];
        const batch = chars.slice(0, MAX_KEYS).join("");
        this.queue = chars.slice(MAX_KEYS).join("");
        try {
          await post(this.path("/terminal"), { keys: batch });
        } catch (e) {
          this.queue = "";
          fill(this.note, `Not typed: ${e instanceof ApiError ? e.text : String(e)}`);
          this.say?.("The keys were not typed into the sheep.");
        }
      }
    } finally {
      this.sending = false;
    }
  }

  dispose() {
    this.disposed = true;
    this.abort?.abort();
    clearTimeout(this.timer);
    this.term?.dispose();
  }
}
