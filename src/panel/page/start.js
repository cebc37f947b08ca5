/**
 * Starting a sheep from the page: the tool's start with the same trust (a project agent that
 * needs a confirmation is refused here, as in a pi without UI, with its code shown).
 */
import { ApiError, get, post } from "./api.js";
import { asText, fill, firstLine, h, oneAtATime } from "./dom.js";
import { sheepHref } from "./fleet.js";

/** The agent definitions a start may name, as the tool's `sheep` lists them: one option each. */
async function loadAgents(select, note) {
  let list;
  try {
    const r = await get("/api/v1/agents");
    list = Array.isArray(r?.agents) ? r.agents : [];
  } catch (err) {
    fill(note, err instanceof ApiError ? err.text : String(err));
    return;
  }
  const chosen = select.value;
  if (list.length === 0) {
    fill(select, h("option", { value: "" }, "No agent definitions found"));
    fill(note, "Add an agent file (~/.pi/agent/agents/<name>.md) to start a sheep; docs/agent-files-and-trust.md in pi-shepherd says how.");
    return;
  }
  fill(
    select,
    list.map((a) => {
      const name = asText(a.name);
      const description = firstLine(a.description, 60);
      const source = asText(a.source);
      return h(
        "option",
        { value: name, title: asText(a.description), "data-about": `${source} agent: ${asText(a.description)}` },
        `${name}${source && source !== "user" ? ` (${source})` : ""}${description ? ` — ${description}` : ""}`,
      );
    }),
  );
  if (list.some((a) => asText(a.name) === chosen)) select.value = chosen;
}

/** The user's model aliases (offered as the model's suggestions) and the hosts set up (this machine first). */
async function loadOptions(models, host, note) {
  let o;
  try {
    o = await get("/api/v1/start-options");
  } catch (err) {
    fill(note, err instanceof ApiError ? err.text : String(err));
    return;
  }
  fill(
    models,
    (Array.isArray(o?.models) ? o.models : []).map((m) => h("option", { value: asText(m.alias), label: `${asText(m.alias)} → ${asText(m.model)}` })),
  );
  const chosen = host.value;
  const hosts = Array.isArray(o?.hosts) && o.hosts.length ? o.hosts : ["local"];
  fill(
    host,
    hosts.map((name) => h("option", { value: asText(name) }, asText(name) === "local" ? "this machine" : asText(name))),
  );
  if (hosts.some((name) => asText(name) === chosen)) host.value = chosen;
}

export function startForm(say) {
  const field = (name, label, attrs = {}) => {
    const input = h("input", { id: `start-${name}`, name, type: "text", autocomplete: "off", ...attrs });
    return { input, row: h("p", { class: "start-field" }, h("label", { for: `start-${name}`, class: "field-label" }, label), input) };
  };
  const agentSelect = h("select", { id: "start-agent", name: "agent", required: true }, h("option", { value: "" }, "Reading the agent definitions…"));
  const agent = {
    input: agentSelect,
    row: h("p", { class: "start-field" }, h("label", { for: "start-agent", class: "field-label" }, "Agent"), agentSelect),
  };
  const label = field("label", "Label (optional)");
  const cwd = field("cwd", "Working directory (optional)");
  const modelList = h("datalist", { id: "start-models" });
  const model = field("model", "Model (optional: an alias or pi's name)", { list: "start-models" });
  model.row.append(modelList);
  const hostSelect = h("select", { id: "start-host", name: "host" }, h("option", { value: "local" }, "this machine"));
  const host = { input: hostSelect, row: h("p", { class: "start-field" }, h("label", { for: "start-host", class: "field-label" }, "Host"), hostSelect) };
  const placementSelect = h(
    "select",
    { id: "start-placement", name: "placement" },
    h("option", { value: "" }, "a tab (default)"),
    h("option", { value: "pane" }, "a pane beside the shepherd"),
    h("option", { value: "workspace" }, "a workspace"),
  );
  const placement = {
    input: placementSelect,
    row: h("p", { class: "start-field" }, h("label", { for: "start-placement", class: "field-label" }, "Placement"), placementSelect),
  };
  const isolate = h("input", { id: "start-isolate", name: "isolate", type: "checkbox" });
  // The chosen definition's source and description, as text.
  const agentAbout = h("p", { class: "muted small agent-about", "aria-live": "polite" });
  agentSelect.addEventListener("change", () => fill(agentAbout, agentSelect.selectedOptions[0]?.dataset.about ?? ""));
  const note = h("p", { class: "note", role: "status" });
  const form = h(
    "form",
    { class: "start-form" },
    h("div", { class: "start-fields" }, agent.row, agentAbout, label.row, cwd.row, model.row, host.row, placement.row),
    h(
      "div",
      { class: "form-row" },
      h("label", { for: "start-isolate", class: "mode" }, isolate, " In a git worktree of its own"),
      h("button", { type: "submit" }, "Start"),
    ),
    note,
  );
  oneAtATime(form, async () => {
    const body = { agent: agent.input.value };
    if (label.input.value.trim()) body.label = label.input.value.trim();
    if (cwd.input.value.trim()) body.cwd = cwd.input.value.trim();
    if (model.input.value.trim()) body.model = model.input.value.trim();
    if (host.input.value && host.input.value !== "local") body.host = host.input.value;
    if (placement.input.value) body.placement = placement.input.value;
    if (isolate.checked) body.isolate = true;
    fill(note, "Starting…");
    try {
      const r = await post("/api/v1/start", body);
      fill(note, "");
      const chosen = agent.input.value;
      form.reset();
      agent.input.value = chosen;
      say(`${asText(r?.label) || asText(r?.agentId)} started.`);
      if (r?.agentId) location.hash = sheepHref(r.agentId);
    } catch (err) {
      fill(note, err instanceof ApiError ? err.text : String(err));
    }
  });
  const details = h("details", { class: "start panel-box" }, h("summary", {}, "Start a sheep"), form);
  // Read each time the form opens: an agent file added meanwhile is offered.
  details.addEventListener("toggle", () => {
    if (details.open) {
      loadAgents(agentSelect, note).then(() => fill(agentAbout, agentSelect.selectedOptions[0]?.dataset.about ?? ""));
      loadOptions(modelList, hostSelect, note);
    }
  });
  return details;
}
