/**
 * The herd's history on the herd's page: which sheep the list shows (live, closed, all; a label,
 * an agent, a host), the totals of today, and the background delegations as groups of their tasks.
 */
import { ApiError, get } from "./api.js";
import { asText, cost, fill, firstLine, h, tokens } from "./dom.js";
import { sheepHref } from "./fleet.js";

const filter = { state: "live", label: "", agent: "", host: "" };

/** The list's query for GET /api/v1/sheep: only what differs from the plain live list. */
export function herdQuery() {
  const q = new URLSearchParams();
  if (filter.state !== "live") q.set("state", filter.state);
  for (const key of ["label", "agent", "host"]) if (filter[key].trim()) q.set(key, filter[key].trim());
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** What the herd spent today, and how many closed sheep are kept. */
export function todayText(totals) {
  const t = totals?.today;
  if (!t) return "";
  const closed = Number(totals.closed) || 0;
  return ` · today ${tokens(t.input)} in · ${tokens(t.output)} out · ${cost(t.cost)}${closed ? ` · ${closed} closed` : ""}`;
}

/** The filter's form; `changed` redraws the list. */
export function historyFilter(changed) {
  const state = h(
    "select",
    { id: "filter-state", name: "state" },
    h("option", { value: "live" }, "Live"),
    h("option", { value: "closed" }, "Closed"),
    h("option", { value: "all" }, "All"),
    ...["idle", "working", "blocked", "starting", "exited"].map((s) => h("option", { value: s }, `Only ${s}`)),
  );
  const text = (name, label) => {
    const input = h("input", { id: `filter-${name}`, name, type: "search", autocomplete: "off" });
    input.addEventListener("input", () => {
      filter[name] = input.value;
      changed();
    });
    return h("p", { class: "start-field" }, h("label", { for: `filter-${name}`, class: "field-label" }, label), input);
  };
  state.addEventListener("change", () => {
    filter.state = state.value;
    changed();
  });
  return h(
    "form",
    { class: "history-filter", role: "search", "aria-label": "Which sheep", onsubmit: (e) => e.preventDefault() },
    h("p", { class: "start-field" }, h("label", { for: "filter-state", class: "field-label" }, "Show"), state),
    text("label", "Label"),
    text("agent", "Agent"),
    text("host", "Host"),
  );
}

function taskItem(t) {
  const who = t.agentId ? h("a", { href: sheepHref(t.agentId) }, asText(t.label) || asText(t.agentId)) : h("span", { class: "muted" }, "not started");
  return h(
    "li",
    { class: "task" },
    h("span", { class: "badge" }, asText(t.status) || "running"),
    " ",
    who,
    " ",
    h("span", { class: "muted small" }, asText(t.agent)),
    " ",
    firstLine(t.task, 160),
    t.usage ? h("span", { class: "muted small" }, ` · ${tokens(t.usage.input)} in · ${tokens(t.usage.output)} out`) : "",
    t.error ? h("span", { class: "muted small" }, ` · ${firstLine(t.error, 160)}`) : "",
  );
}

/** Draws the background delegations (the newest first) into `root`, each one group with its tasks. */
export async function drawDelegations(root) {
  let list;
  try {
    list = (await get("/api/v1/delegations"))?.delegations;
  } catch (e) {
    fill(root, h("p", { class: "muted" }, e instanceof ApiError ? e.text : String(e)));
    return;
  }
  if (!Array.isArray(list) || list.length === 0) {
    fill(root);
    return;
  }
  fill(
    root,
    h("h3", {}, "Delegations"),
    h(
      "ol",
      { class: "delegations" },
      list.map((d) =>
        h(
          "li",
          { class: "delegation", "data-delegation-id": asText(d.delegationId) },
          h("span", { class: "badge" }, d.delivered ? "delivered" : d.done ? "done" : "running"),
          " ",
          `${asText(d.mode)} · ${asText(d.delegationId)}`,
          h("ol", { class: "tasks" }, (Array.isArray(d.tasks) ? d.tasks : []).map(taskItem)),
        ),
      ),
    ),
  );
}
