/**
 * Starting a sheep from the page: the tool's start with the same trust (a project agent that
 * needs a confirmation is refused here, as in a pi without UI, with its code shown).
 */
import { ApiError, post } from "./api.js";
import { asText, fill, h, oneAtATime } from "./dom.js";
import { sheepHref } from "./fleet.js";

export function startForm(say) {
  const field = (name, label, attrs = {}) => {
    const input = h("input", { id: `start-${name}`, name, type: "text", autocomplete: "off", ...attrs });
    return { input, row: h("p", { class: "start-field" }, h("label", { for: `start-${name}`, class: "field-label" }, label), input) };
  };
  const agent = field("agent", "Agent", { required: true, placeholder: "e.g. echo" });
  const label = field("label", "Label (optional)");
  const cwd = field("cwd", "Working directory (optional)");
  const isolate = h("input", { id: "start-isolate", name: "isolate", type: "checkbox" });
  const note = h("p", { class: "note", role: "status" });
  const form = h(
    "form",
    { class: "start-form" },
    h("div", { class: "start-fields" }, agent.row, label.row, cwd.row),
    h(
      "div",
      { class: "form-row" },
      h("label", { for: "start-isolate", class: "mode" }, isolate, " In a git worktree of its own"),
      h("button", { type: "submit" }, "Start"),
    ),
    note,
  );
  oneAtATime(form, async () => {
    const body = { agent: agent.input.value.trim() };
    if (label.input.value.trim()) body.label = label.input.value.trim();
    if (cwd.input.value.trim()) body.cwd = cwd.input.value.trim();
    if (isolate.checked) body.isolate = true;
    fill(note, "Starting…");
    try {
      const r = await post("/api/v1/start", body);
      fill(note, "");
      form.reset();
      say(`${asText(r?.label) || asText(r?.agentId)} started.`);
      if (r?.agentId) location.hash = sheepHref(r.agentId);
    } catch (err) {
      fill(note, err instanceof ApiError ? err.text : String(err));
    }
  });
  return h("details", { class: "start panel-box" }, h("summary", {}, "Start a sheep"), form);
}
