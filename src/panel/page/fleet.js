/**
 * The herd at a glance: every sheep grouped by host, with its state, what it works on and for
 * how long, its queue, questions waiting, tokens and cost; the herd's totals above.
 */
import { attentionOf } from "./attention.js";
import { arrange, asText, cost, fill, firstLine, h, since, stateBadge, tokens, visible } from "./dom.js";

export const sheepHref = (agentId) => `#/sheep/${encodeURIComponent(asText(agentId))}`;

/** What a sheep works on: the first line of its running prompt. */
export function workingOn(s) {
  const w = s?.working;
  if (w === undefined || w === null || w === false) return "";
  if (typeof w === "string") return firstLine(w);
  return firstLine(w.firstLine ?? w.text ?? w.message ?? asText(w));
}

function usageText(u) {
  return `${tokens(u?.input)} in · ${tokens(u?.output)} out`;
}

export function totalsText(totals) {
  if (!totals) return "";
  const n = Number(totals.sheep) || 0;
  const states = Object.entries(totals.byState ?? {})
    .filter(([, count]) => Number(count) > 0)
    .map(([state, count]) => `${count} ${state}`)
    .join(", ");
  return `${n} sheep${states ? ` (${states})` : ""} · ${tokens(totals.input)} in · ${tokens(totals.output)} out · ${cost(totals.cost)}`;
}

const COLUMNS = ["Sheep", "State", "Working on", "For", "Queue", "Questions", "Tokens", "Cost"];

/**
 * A cell of a row; on a narrow screen the rows are stacked as cards and each cell names its
 * column itself (`data-label`, drawn by the stylesheet). The roles keep it a table to a screen
 * reader whatever the stylesheet makes of it.
 */
const cell = (column, attrs, ...children) => h("td", { role: "cell", "data-label": COLUMNS[column], ...attrs }, ...children);

function row(s) {
  const questions = Number(s.questions) || 0;
  const unread = Number(s.unread) || 0;
  const waits = attentionOf(s);
  return h(
    "tr",
    { class: waits ? "sheep-row needs-you" : "sheep-row", role: "row", "data-agent-id": asText(s.agentId) },
    h(
      "th",
      { scope: "row", role: "rowheader" },
      h("a", { href: sheepHref(s.agentId), class: "sheep-link", "data-focus": `sheep:${asText(s.agentId)}` }, asText(s.label) || asText(s.agentId)),
      " ",
      h("span", { class: "muted small agent-name" }, asText(s.agent)),
      s.isolated ? h("span", { class: "tag", title: asText(s.worktree?.branch) }, "isolated") : "",
      s.sandboxed === true ? h("span", { class: "tag", title: "no network but its egress proxy" }, "sandboxed") : "",
      waits ? h("span", { class: "tag tag-attention", title: waits }, `waits for you: ${waits}`) : "",
    ),
    cell(1, {}, stateBadge(s.state)),
    cell(2, { class: "working-on" }, workingOn(s) || h("span", { class: "muted" }, "–")),
    cell(3, { class: "num" }, since(s.since)),
    cell(4, { class: "num" }, String(Number(s.queue) || 0)),
    cell(
      5,
      { class: questions > 0 ? "num attention" : "num" },
      String(questions),
      unread > questions ? h("span", { class: "muted small" }, ` (${unread} unread)`) : "",
    ),
    cell(6, { class: "num" }, usageText(s.usage)),
    cell(7, { class: "num" }, cost(s.usage?.cost)),
  );
}

/** Rows and host tables drawn before, by what they show: a redraw keeps the nodes of what did not change. */
let drawnRows = new Map();
let drawnHosts = new Map();

function hostTable(host, sheep, rows) {
  let t = drawnHosts.get(host);
  if (!t) {
    const caption = h("h3");
    const tbody = h("tbody", { role: "rowgroup" });
    const section = h(
      "section",
      { class: "host", "data-host": host },
      caption,
      h(
        "table",
        { class: "fleet-table", role: "table" },
        h("thead", { role: "rowgroup" }, h("tr", { role: "row" }, ...COLUMNS.map((c) => h("th", { scope: "col", role: "columnheader" }, c)))),
        tbody,
      ),
    );
    t = { section, caption, tbody };
  }
  const caption = visible(`${host} · ${sheep.length} sheep`);
  if (t.caption.textContent !== caption) t.caption.textContent = caption;
  arrange(
    t.tbody,
    sheep.map((s) => {
      const key = JSON.stringify(s);
      const tr = (!rows.has(key) && drawnRows.get(key)) || row(s);
      if (!rows.has(key)) rows.set(key, tr);
      return tr;
    }),
  );
  return t;
}

/**
 * Draws the fleet into `root`. A row whose sheep did not change is the same node as before, so a
 * selection in it (an id, a label to copy) stays; the focused link keeps its focus across a redraw.
 */
export function renderFleet(root, data) {
  const focused = document.activeElement?.dataset?.focus;
  const list = Array.isArray(data?.sheep) ? data.sheep : [];
  const hosts = new Map();
  for (const s of list) {
    const host = asText(s.host) || "local";
    if (!hosts.has(host)) hosts.set(host, []);
    hosts.get(host).push(s);
  }
  const names = [...hosts.keys()].sort((a, b) => (a === "local" ? -1 : b === "local" ? 1 : a.localeCompare(b)));
  for (const sheep of hosts.values()) sheep.sort((a, b) => asText(a.label).localeCompare(asText(b.label)));
  const rows = new Map();
  const tables = new Map(names.map((host) => [host, hostTable(host, hosts.get(host), rows)]));
  drawnRows = rows;
  drawnHosts = tables;
  if (list.length === 0) fill(root, h("p", { class: "empty" }, "No sheep yet. Start one from the shepherd (the shepherd tool's start, or /shepherd start)."));
  else
    arrange(
      root,
      names.map((host) => tables.get(host).section),
    );
  if (focused && document.activeElement?.dataset?.focus !== focused) root.querySelector(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
}
