/**
 * One sheep: what it is and costs, a prompt box (a new prompt, a steer into the running turn, or
 * a follow-up queued behind it), its messages with a reply box for each question that waits, its
 * conversation, its live screen, and each prompt with its evidence drawn as a per-file diff.
 * Interrupt and close ask first. Boxes a person types in are built once and kept across redraws.
 * Another shepherd's sheep is shown the same way through this panel (`/api/v1/shepherds/:id/…`):
 * every read and action, its terminal and its work too, is that shepherd's own route.
 */
import { ApiError, get, post, sheepPath } from "./api.js";
import { arrange, asText, clock, cost, fill, firstLine, h, oneAtATime, promptRefusalText, since, stateBadge, tokens, visible } from "./dom.js";
import { renderDiff } from "./diff.js";
import { sheepHref, workingOn } from "./fleet.js";
import { WorkBox } from "./work.js";
import { SheepTerminal } from "./terminal.js";

const TURNS = 20;
const SCREEN_MS = 2000;
/** A sandboxed sheep's egress log is read again every this many screen reads (10 s). */
const EGRESS_EVERY = 5;
const KINDS = new Set(["progress", "question", "done"]);
const LINE_KINDS = new Set(["prompt", "answer", "tool", "error"]);
const PROMPT_STATUSES = new Set(["pending", "queued", "working", "completed", "failed", "timeout", "cancelled", "blocked"]);

function errorText(e) {
  return e instanceof ApiError ? e.text : e instanceof Error ? e.message : String(e);
}

/** Asks through the page's one dialog; resolves true when the person confirms. */
function confirmDialog({ title, text, confirm, options = [] }) {
  const dialog = document.getElementById("confirm");
  fill(dialog.querySelector(".dialog-title"), title);
  fill(dialog.querySelector(".dialog-text"), text);
  const boxes = options.map((o) => h("input", { type: "checkbox", name: o.name, id: `confirm-${o.name}` }));
  fill(
    dialog.querySelector(".dialog-options"),
    options.map((o, i) => h("p", {}, h("label", { for: `confirm-${o.name}` }, boxes[i], ` ${o.label}`))),
  );
  fill(dialog.querySelector("button[value=ok]"), confirm);
  dialog.returnValue = "";
  dialog.showModal();
  dialog.querySelector("button[value=cancel]").focus();
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "ok" ? Object.fromEntries(options.map((o, i) => [o.name, boxes[i].checked])) : undefined),
      { once: true },
    );
  });
}

/** `1.5 kB`: bytes for a reader. */
function bytes(v) {
  if (v < 1000) return `${v} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let x = v;
  let i = -1;
  while (x >= 1000 && i < units.length - 1) {
    x /= 1000;
    i++;
  }
  return `${x >= 100 ? Math.round(x) : Number(x.toFixed(1))} ${units[i]}`;
}

/** One attempt: its time, verdict, method and target, why, and what it moved. */
function egressItem(e) {
  const refused = e?.verdict === "refused";
  const moved = refused ? "" : ` · ${bytes(Number(e?.bytesUp) || 0)} up, ${bytes(Number(e?.bytesDown) || 0)} down`;
  return h(
    "li",
    { class: refused ? "egress-refused" : "egress-allowed" },
    h("time", { datetime: asText(e?.time) }, clock(asText(e?.time))),
    " ",
    h("strong", {}, refused ? "refused" : "allowed"),
    ` ${asText(e?.method)} `,
    h("code", {}, asText(e?.target)),
    e?.address ? ` → ${asText(e.address)}` : "",
    e?.reason ? ` (${asText(e.reason)})` : "",
    moved,
  );
}

export class SheepView {
  /** `shepherd`: another of this user's shepherds ({id, name}) whose sheep this is; absent for this panel's own. */
  constructor(root, agentId, say, shepherd) {
    this.root = root;
    this.agentId = agentId;
    this.say = say;
    this.shepherd = shepherd;
    this.detail = undefined;
    this.gone = false;
    this.openDiffs = new Set();
    this.messageItems = new Map();
    this.promptItems = new Map();
    this.build();
    this.turnNodes = new Map();
    this.ticks = 0;
    this.screenTimer = setInterval(() => {
      if (document.hidden || !this.hasPane()) return;
      this.loadScreen();
      if (++this.ticks % EGRESS_EVERY === 0 && this.detail?.sandboxed === true) this.loadEgress();
    }, SCREEN_MS);
  }

  /** The sheep's route, on this panel or through it on its own shepherd's. */
  path(rest = "") {
    const own = sheepPath(this.agentId, rest);
    return this.shepherd ? `/api/v1/shepherds/${encodeURIComponent(this.shepherd.id)}${own}` : own;
  }

  dispose() {
    this.terminal.dispose();
    clearInterval(this.screenTimer);
    this.disposed = true;
  }

  /** A closed sheep's pane is gone: its screen is not asked for (the answer would be 409 agent_closed). */
  hasPane() {
    return !this.disposed && !this.gone && !this.closed && this.detail?.state !== "closed";
  }

  build() {
    this.title = h("h2", { tabindex: "-1", class: "sheep-title" }, this.agentId);
    this.stateEl = h("span");
    this.meta = h("dl", { class: "meta" });
    this.interruptBtn = h("button", { type: "button", class: "danger-soft", onclick: () => this.interrupt() }, "Interrupt");
    this.closeBtn = h("button", { type: "button", class: "danger", onclick: () => this.close() }, "Close…");
    this.actionNote = h("p", { class: "note", role: "status" });

    this.promptText = h("textarea", {
      id: "prompt-text",
      name: "message",
      rows: "4",
      required: true,
      placeholder: "What should this sheep do? (Ctrl+Enter sends)",
    });
    this.promptText.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        if (!e.repeat) this.promptForm.requestSubmit();
      }
    });
    const mode = (value, label, hint, checked = false) =>
      h("label", { class: "mode", title: hint }, h("input", { type: "radio", name: "deliverAs", value, checked }), ` ${label}`);
    this.promptNote = h("p", { class: "note", role: "status" });
    this.promptForm = h(
      "form",
      { class: "prompt-form" },
      h("label", { for: "prompt-text", class: "field-label" }, "Prompt"),
      this.promptText,
      h(
        "div",
        { class: "form-row" },
        h(
          "fieldset",
          { class: "modes" },
          h("legend", { class: "visually-hidden" }, "Deliver as"),
          mode("prompt", "New prompt", "a prompt of its own (refused while the sheep works: then Steer or Follow-up)", true),
          mode("steer", "Steer", "into the running turn, read at the sheep's next step"),
          mode("followUp", "Follow-up", "queued behind the running prompt"),
        ),
        h("button", { type: "submit" }, "Send"),
      ),
      this.promptNote,
    );
    oneAtATime(this.promptForm, () => this.sendPrompt());

    this.messagesList = h("ol", { class: "messages" });
    this.conversation = h("div", { class: "conversation", tabindex: "0", "aria-label": "Conversation" });
    this.emptyNote = h("p", { class: "muted" }, "Nothing said yet.");
    this.earlierNote = h("p", { class: "muted small" }, `Earlier turns are in the session file; the last ${TURNS} are shown.`);
    this.screen = h("pre", { class: "screen", tabindex: "0", "aria-label": "Live screen" });
    this.screenNote = h("p", { class: "muted small" });
    this.promptsList = h("ol", { class: "prompts" });
    // Another shepherd's sheep's work and pane: that shepherd's own routes, through this panel.
    const href = (agentId) =>
      this.shepherd ? `#/shepherd/${encodeURIComponent(this.shepherd.id)}/sheep/${encodeURIComponent(asText(agentId))}` : sheepHref(agentId);
    this.work = new WorkBox(
      this.agentId,
      this.say,
      () => this.refresh(),
      (rest) => this.path(rest),
      href,
    );
    this.egressSummary = h("p", { class: "small" });
    this.terminal = new SheepTerminal(this.agentId, this.say, (rest) => this.path(rest));
    this.egressList = h("ol", { class: "egress", tabindex: "0", "aria-label": "Egress log" });
    this.egressBox = h(
      "section",
      { class: "panel-box", "aria-labelledby": "h-egress", hidden: true },
      h("h3", { id: "h-egress" }, "Egress"),
      this.egressSummary,
      this.egressList,
    );

    fill(
      this.root,
      h(
        "header",
        { class: "sheep-head" },
        h("p", {}, h("a", { href: "#/", class: "back" }, "← The herd")),
        h("div", { class: "title-row" }, this.title, this.stateEl, h("div", { class: "actions" }, this.interruptBtn, this.closeBtn)),
        this.shepherd
          ? h(
              "p",
              { class: "shepherd-of muted" },
              `A sheep of your shepherd ${this.shepherd.name}: what you do here (its terminal and its work too) goes to that shepherd, under its rules.`,
            )
          : "",
        this.meta,
        this.actionNote,
      ),
      this.terminal.el,
      this.work.box,
      h(
        "div",
        { class: "sheep-grid" },
        h(
          "div",
          { class: "col" },
          h("section", { class: "panel-box", "aria-labelledby": "h-prompt" }, h("h3", { id: "h-prompt" }, "Send"), this.promptForm),
          h("section", { class: "panel-box", "aria-labelledby": "h-conv" }, h("h3", { id: "h-conv" }, "Conversation"), this.conversation),
          h("section", { class: "panel-box", "aria-labelledby": "h-prompts" }, h("h3", { id: "h-prompts" }, "Prompts and their evidence"), this.promptsList),
        ),
        h(
          "div",
          { class: "col" },
          h("section", { class: "panel-box", "aria-labelledby": "h-msgs" }, h("h3", { id: "h-msgs" }, "Messages"), this.messagesList),
          h("section", { class: "panel-box", "aria-labelledby": "h-screen" }, h("h3", { id: "h-screen" }, "Screen"), this.screen, this.screenNote),
          this.egressBox,
        ),
      ),
    );
  }

  focus() {
    this.title.focus();
  }

  /** Reads everything again; a sheep that is gone says so. */
  async refresh() {
    if (this.disposed) return;
    await this.loadDetail();
    if (this.gone || this.disposed) return;
    if (!this.hasPane()) this.noScreen();
    // The terminal streams by itself once opened: the first refresh with a pane opens it, one without ends it.
    const runs = this.hasPane() && this.detail?.state !== "exited";
    if (runs && !this.terminalOpened) {
      this.terminalOpened = true;
      this.terminal.open();
    } else if (!runs && !this.terminal.ended) this.terminal.stop("Its pi has ended or its pane is closed: no terminal.");
    await Promise.all([
      this.loadConversation(),
      this.loadMessages(),
      this.hasPane() ? this.loadScreen() : undefined,
      this.detail?.sandboxed === true ? this.loadEgress() : undefined,
    ]);
  }

  noScreen() {
    if (this.screen.textContent !== "") fill(this.screen);
    fill(this.screenNote, "Its pane is closed: no screen to show.");
  }

  async loadDetail() {
    try {
      const d = await get(this.path());
      if (this.disposed) return;
      this.detail = d;
      this.gone = false;
      this.drawDetail();
    } catch (e) {
      if (this.disposed) return;
      if (e instanceof ApiError && e.status === 404) {
        this.gone = true;
        fill(this.stateEl, stateBadge("closed"));
        // Through this panel a 404 may also say that its shepherd is gone: its own words then.
        fill(this.actionNote, this.shepherd && e.code !== "unknown_agent" ? errorText(e) : "This sheep is no longer in the herd.");
        this.interruptBtn.disabled = true;
        this.closeBtn.disabled = true;
      } else fill(this.actionNote, errorText(e));
    }
  }

  drawDetail() {
    const d = this.detail;
    fill(this.title, asText(d.label) || asText(d.agentId));
    document.title = visible(`${asText(d.label) || asText(d.agentId)} · pi-shepherd`);
    fill(this.stateEl, stateBadge(d.state), " ", since(d.since));
    const ended = d.state === "closed" || d.state === "exited";
    this.closeBtn.disabled = d.state === "closed";
    // The core interrupts a running prompt only: a sheep starting up, or between prompts, has none.
    this.interruptBtn.disabled = ended || !d.activePromptId;
    const working = workingOn(d);
    const code = (text) => h("code", {}, text);
    const wt = d.worktree;
    this.drawMeta([
      ["id", code, asText(d.agentId)],
      ["agent", asText(d.agent)],
      ["host", asText(d.host) || "local"],
      d.model ? ["model", asText(d.model)] : undefined,
      ["cwd", code, asText(d.cwd)],
      wt ? ["worktree", (path, branch) => [code(path), " on ", code(branch)], asText(wt.path), asText(wt.branch)] : undefined,
      d.sandboxed === true ? ["sandbox", "sandboxed: no network but its egress proxy"] : undefined,
      working ? ["working on", working] : undefined,
      ["queue", String(Number(d.queue) || 0)],
      ["tokens", `${tokens(d.usage?.input)} in · ${tokens(d.usage?.output)} out`],
      ["cost", cost(d.usage?.cost)],
      d.sessionPath ? ["session file", code, asText(d.sessionPath)] : undefined,
    ]);
    this.work.draw(d);
    this.drawPrompts(Array.isArray(d.prompts) ? d.prompts : []);
  }

  /**
   * The sheep's facts, each [term, text] or [term, draw, ...texts]: a fact is redrawn only when
   * its text changed, so what a person selected in the others (the cwd, to copy it) stays selected.
   */
  drawMeta(rows) {
    const shown = [];
    const kept = new Map();
    for (const row of rows) {
      if (!row) continue;
      const [term, draw, ...texts] = typeof row[1] === "function" ? row : [row[0], undefined, row[1]];
      const key = JSON.stringify(texts);
      let fact = this.metaFacts?.get(term);
      if (!fact) fact = { dt: h("dt", {}, term), dd: h("dd"), key: undefined };
      if (fact.key !== key) {
        fill(fact.dd, ...(draw ? [draw(...texts)].flat() : texts));
        fact.key = key;
      }
      kept.set(term, fact);
      shown.push(fact.dt, fact.dd);
    }
    this.metaFacts = kept;
    arrange(this.meta, shown);
  }

  drawPrompts(prompts) {
    if (prompts.length === 0) {
      fill(this.promptsList, h("li", { class: "muted" }, "No prompt yet."));
      this.promptItems.clear();
      return;
    }
    const keep = new Set();
    const ordered = [...prompts].reverse();
    for (const p of ordered) {
      const id = asText(p.promptId);
      keep.add(id);
      let item = this.promptItems.get(id);
      if (!item) {
        item = this.promptItem(id);
        this.promptItems.set(id, item);
      }
      this.updatePromptItem(item, p);
    }
    for (const [id, item] of this.promptItems) {
      if (!keep.has(id)) {
        item.li.remove();
        this.promptItems.delete(id);
      }
    }
    arrange(
      this.promptsList,
      ordered.map((p) => this.promptItems.get(asText(p.promptId)).li),
    );
  }

  promptItem(promptId) {
    const summary = h("summary");
    const body = h("div", { class: "diff-body" });
    const details = h("details", { class: "prompt", "data-prompt-id": promptId }, summary, body);
    const item = { li: h("li", {}, details), summary, body, details, status: undefined, loaded: false };
    details.addEventListener("toggle", () => {
      if (details.open) {
        this.openDiffs.add(promptId);
        if (!item.loaded) this.loadDiff(promptId, item);
      } else this.openDiffs.delete(promptId);
    });
    return item;
  }

  updatePromptItem(item, p) {
    const status = asText(p.status);
    const times = [p.startedAt ? `started ${clock(p.startedAt)}` : "", p.finishedAt ? `finished ${clock(p.finishedAt)}` : ""].filter(Boolean).join(", ");
    fill(
      item.summary,
      h("span", { class: PROMPT_STATUSES.has(status) ? `badge ps-${status}` : "badge" }, status || "?"),
      " ",
      h("span", { class: "prompt-line" }, firstLine(p.firstLine, 160) || h("span", { class: "muted" }, "(empty)")),
      " ",
      h("span", { class: "muted small" }, `${asText(p.promptId)}${times ? ` · ${times}` : ""}`),
      evidenceNote(p.evidence),
    );
    // Its answer (or why it failed) stays on the page after the sheep closed: as text, never markup.
    const said = typeof p.answer === "string" ? p.answer : typeof p.error === "string" ? p.error : undefined;
    const key = `${said}${p.answerTruncated ? "…" : ""}`;
    if (item.said !== key) {
      item.said = key;
      if (!item.answer) {
        item.answer = h("pre", { class: "answer" });
        item.li.insertBefore(item.answer, item.details.nextSibling);
      }
      item.answer.hidden = said === undefined;
      fill(item.answer, said ?? "", p.answerTruncated ? "\n… (the whole answer is in its session file)" : "");
    }
    // A prompt that settled since its diff was read has new evidence.
    if (item.status !== undefined && item.status !== status) item.loaded = false;
    item.status = status;
    if (item.details.open && !item.loaded) this.loadDiff(asText(p.promptId), item);
  }

  async loadDiff(promptId, item) {
    item.loaded = true;
    fill(item.body, h("p", { class: "muted" }, "Reading the evidence…"));
    try {
      const diff = await get(`${this.path("/diff")}?promptId=${encodeURIComponent(promptId)}`);
      fill(item.body, renderDiff(diff));
    } catch (e) {
      item.loaded = false;
      fill(item.body, h("p", { class: "muted" }, errorText(e)));
    }
  }

  async loadConversation() {
    try {
      const c = await get(`${this.path("/conversation")}?turns=${TURNS}`);
      if (this.disposed) return;
      const turns = Array.isArray(c?.turns) ? c.turns : [];
      const atBottom = this.conversation.scrollTop + this.conversation.clientHeight >= this.conversation.scrollHeight - 8;
      // A turn read again as it was keeps its nodes: a new turn, or the one still growing, is all that
      // is drawn, so what a person selected in an earlier turn (to copy it) stays selected.
      const drawn = new Map();
      const nodes = turns.map((t) => {
        const key = JSON.stringify(t);
        // Two turns alike (no time on them) are two nodes: one node stands in one place.
        const node = (!drawn.has(key) && this.turnNodes.get(key)) || drawTurn(t);
        if (!drawn.has(key)) drawn.set(key, node);
        return node;
      });
      this.turnNodes = drawn;
      // "Nothing said yet" only when there is nothing earlier either: one huge turn can fill the whole tail.
      const empty = turns.length === 0 && !c?.earlier ? this.emptyNote : undefined;
      const earlier = c?.earlier ? this.earlierNote : undefined;
      arrange(this.conversation, [empty, earlier, ...nodes].filter(Boolean));
      if (atBottom) this.conversation.scrollTop = this.conversation.scrollHeight;
    } catch (e) {
      if (!this.disposed) fill(this.conversation, h("p", { class: "muted" }, errorText(e)));
    }
  }

  async loadScreen() {
    try {
      const s = await get(this.path("/screen"));
      if (!this.hasPane()) return;
      const text = visible(asText(s?.text));
      if (this.screen.textContent !== text) {
        // Like a terminal: the newest lines stay in sight unless the person scrolled up to read.
        const atBottom = this.screen.textContent === "" || this.screen.scrollTop + this.screen.clientHeight >= this.screen.scrollHeight - 8;
        this.screen.textContent = text;
        if (atBottom) this.screen.scrollTop = this.screen.scrollHeight;
      }
      fill(this.screenNote, `read ${clock(new Date().toISOString())}`);
    } catch (e) {
      if (!this.disposed) fill(this.screenNote, errorText(e));
    }
  }

  /** What a sandboxed sheep tried to reach: the counts, then its last entries, newest last; each a text node. */
  async loadEgress() {
    try {
      const r = await get(this.path("/egress"));
      if (this.disposed) return;
      this.egressBox.hidden = false;
      const n = (v) => Number(v) || 0;
      const since = r?.since ? ` since ${clock(asText(r.since))}` : "";
      const skipped = n(r?.skipped) ? ` (${n(r.skipped)} lines of the log are no entry)` : "";
      fill(
        this.egressSummary,
        `${n(r?.allowed)} allowed, ${n(r?.refused)} refused, ${bytes(n(r?.bytesUp))} up, ${bytes(n(r?.bytesDown))} down${since}${skipped}`,
      );
      const entries = Array.isArray(r?.entries) ? r.entries : [];
      if (entries.length === 0) {
        fill(this.egressList, h("li", { class: "muted" }, "Nothing tried yet."));
        return;
      }
      fill(this.egressList, entries.map(egressItem));
    } catch (e) {
      if (!this.disposed) fill(this.egressSummary, errorText(e));
    }
  }

  async loadMessages() {
    try {
      const r = await get(this.path("/messages"));
      if (this.disposed) return;
      this.drawMessages(Array.isArray(r?.messages) ? r.messages : []);
    } catch (e) {
      if (!this.disposed) fill(this.messagesList, h("li", { class: "muted" }, errorText(e)));
    }
  }

  drawMessages(messages) {
    if (messages.length === 0) {
      this.messageItems.clear();
      fill(this.messagesList, h("li", { class: "muted" }, "No messages."));
      return;
    }
    for (const m of messages) {
      const id = asText(m.messageId);
      let item = this.messageItems.get(id);
      if (!item) {
        item = this.messageItem(m);
        this.messageItems.set(id, item);
      }
      this.updateMessageItem(item, m);
    }
    arrange(
      this.messagesList,
      messages.map((m) => this.messageItems.get(asText(m.messageId)).li),
    );
  }

  messageItem(m) {
    const id = asText(m.messageId);
    const kind = KINDS.has(m.kind) ? m.kind : "other";
    const state = h("span", { class: "muted small" });
    const textId = `reply-${id.replace(/[^\w-]/g, "_")}`;
    const input = h("textarea", { id: textId, rows: "2", required: true, placeholder: "Your answer (Ctrl+Enter sends)" });
    const note = h("p", { class: "note", role: "status" });
    const form = h(
      "form",
      { class: "reply-form", hidden: true },
      h("label", { for: textId, class: "field-label" }, "Reply"),
      input,
      h("div", { class: "form-row" }, h("button", { type: "submit" }, "Reply")),
      note,
    );
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        if (!e.repeat) form.requestSubmit();
      }
    });
    const reply = h("div", { class: "msg-reply", hidden: true });
    const li = h(
      "li",
      { class: `message msg-${kind}`, "data-message-id": id, tabindex: "-1" },
      h("p", { class: "msg-head" }, h("span", { class: "badge" }, kind), " ", h("span", { class: "muted small" }, `${clock(m.at)} · ${id}`), " ", state),
      h("div", { class: "msg-text" }, asText(m.text)),
      reply,
      form,
    );
    oneAtATime(form, () => this.sendReply(id, input, note, form, li));
    return { li, form, state, reply, replyText: undefined };
  }

  updateMessageItem(item, m) {
    const waits = m.kind === "question" && m.awaitReply === true && !m.replied && !m.expired;
    const state = m.replied ? "answered" : m.expired ? "no longer waits (its time ran out)" : waits ? "waits for a reply" : "";
    fill(item.state, state);
    // An answered question shows what it was told, under it.
    const replyText = m.replied && typeof m.reply === "string" ? m.reply : undefined;
    if (replyText !== item.replyText) {
      item.replyText = replyText;
      if (replyText === undefined) fill(item.reply);
      else fill(item.reply, h("p", { class: "field-label" }, "Reply"), h("div", { class: "reply-text" }, replyText));
      item.reply.hidden = replyText === undefined;
    }
    if (!waits) item.form.hidden = true;
    else if (item.form.hidden) item.form.hidden = false;
  }

  async sendReply(messageId, input, note, form, li) {
    const text = input.value;
    if (!text.trim()) return;
    fill(note, "Sending…");
    try {
      await post(this.path("/reply"), { messageId, text });
      input.value = "";
      // The box goes away with the focus in it: the focus stays on its message, not the page's top.
      if (form.contains(document.activeElement)) li.focus();
      form.hidden = true;
      fill(note, "");
      this.say("Reply sent.");
      this.loadMessages();
    } catch (err) {
      fill(note, errorText(err));
    }
  }

  async sendPrompt() {
    const message = this.promptText.value;
    if (!message.trim()) return;
    const mode = new FormData(this.promptForm).get("deliverAs");
    const body = mode === "steer" || mode === "followUp" ? { message, deliverAs: mode } : { message };
    fill(this.promptNote, "Sending…");
    try {
      const r = await post(this.path("/prompt"), body);
      // Only what was sent leaves the box: what the person typed on while it was on its way stays.
      const now = this.promptText.value;
      this.promptText.value = now.startsWith(message) ? now.slice(message.length).trimStart() : now;
      fill(this.promptNote, `Sent as ${asText(r?.promptId)}.`);
      this.loadDetail();
      this.loadConversation();
    } catch (err) {
      fill(this.promptNote, promptRefusalText(err?.code, asText(this.detail?.label) || this.agentId, errorText(err)));
    }
  }

  async interrupt() {
    const label = asText(this.detail?.label) || this.agentId;
    const ok = await confirmDialog({
      title: `Interrupt ${label}?`,
      text: "Its running turn stops (as Escape in its pane); queued prompts stay queued.",
      confirm: "Interrupt",
    });
    if (!ok) return;
    try {
      await post(this.path("/interrupt"), {});
      fill(this.actionNote, "Interrupted.");
      this.loadDetail();
    } catch (err) {
      fill(this.actionNote, errorText(err));
    }
  }

  async close() {
    const label = asText(this.detail?.label) || this.agentId;
    const isolated = Boolean(this.detail?.worktree);
    const answer = await confirmDialog({
      title: `Close ${label}?`,
      text: "Its pi ends and its pane closes; its session file is kept, so it can be resumed.",
      confirm: "Close",
      options: isolated
        ? [
            { name: "removeWorktree", label: "Remove its worktree too (only when it holds nothing unlanded)" },
            { name: "force", label: "Remove the worktree even if it holds work (that work is lost)" },
          ]
        : [],
    });
    if (!answer) return;
    const body = {};
    // "Even if it holds work" is a removal too: the tool takes force only with removeWorktree.
    if (answer.removeWorktree || answer.force) body.removeWorktree = true;
    if (answer.force) body.force = true;
    fill(this.actionNote, "Closing…");
    // From now on nothing is read of its pane (going, then gone), not even by an event that comes
    // before the herd is drawn; a close that fails gives it back.
    this.closed = true;
    try {
      await post(this.path("/close"), body);
      this.say(`${label} closed.`);
      location.hash = "#/";
    } catch (err) {
      this.closed = false;
      fill(this.actionNote, errorText(err));
    }
  }
}

/** One turn of the conversation: its time, then each line classed by its kind. */
function drawTurn(t) {
  return h(
    "article",
    { class: "turn" },
    t.at ? h("p", { class: "muted small" }, clock(t.at)) : "",
    t.cut === true ? h("p", { class: "muted small" }, "… this turn began earlier in the session file than was read") : "",
    (Array.isArray(t.lines) ? t.lines : []).map((l) => {
      const kind = LINE_KINDS.has(l.kind) ? l.kind : "other";
      return h(
        "div",
        { class: `conv-line conv-${kind}${l.failed ? " failed" : ""}` },
        h("span", { class: "conv-kind" }, kind),
        h("div", { class: "conv-text" }, asText(l.text)),
      );
    }),
  );
}

function evidenceNote(evidence) {
  if (!evidence) return "";
  if (typeof evidence === "object" && Array.isArray(evidence.files)) {
    const n = evidence.files.length;
    return h("span", { class: "evidence-note" }, ` · ${n} file${n === 1 ? "" : "s"} changed`);
  }
  if (typeof evidence === "object" && typeof evidence.files === "number") {
    const n = evidence.files;
    return h("span", { class: "evidence-note" }, ` · ${n} file${n === 1 ? "" : "s"}, +${Number(evidence.insertions) || 0} −${Number(evidence.deletions) || 0}`);
  }
  return h("span", { class: "evidence-note" }, " · has evidence");
}
