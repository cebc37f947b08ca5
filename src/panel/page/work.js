/**
 * An isolated sheep's work on its page: where its branch stands (ahead, behind, conflicts, landed)
 * and Land (merge or squash, a message of one's own), Sync, Remove worktree; Resume for a sheep that
 * ended. Each is the tool's own command through the API, its refusal shown with its [code].
 */
import { ApiError, get, post, sheepPath } from "./api.js";
import { asText, fill, h, oneAtATime } from "./dom.js";
import { sheepHref } from "./fleet.js";

function errorText(e) {
  return e instanceof ApiError ? e.text : String(e);
}

/** A branch's state in words: what a person decides on. */
export function branchText(b) {
  if (b?.known !== true) return "Its machine does not tell where the branch stands; land or sync says.";
  if (b.exists === false) return `Its worktree is gone; branch ${asText(b.branch)}.`;
  const parts = [];
  const conflicts = Array.isArray(b.conflicts) ? b.conflicts : [];
  if (conflicts.length)
    parts.push(`conflicts in ${conflicts.slice(0, 5).map(asText).join(", ")}${conflicts.length > 5 ? ` and ${conflicts.length - 5} more` : ""}`);
  if (b.landed) parts.push("landed");
  else if (!b.worked) parts.push("no work yet");
  parts.push(`${Number(b.ahead) || 0} ahead`, `${Number(b.behind) || 0} behind ${asText(b.into)}`);
  if (Number(b.uncommitted) > 0) parts.push(`${Number(b.uncommitted)} uncommitted`);
  return parts.join(" · ");
}

export class WorkBox {
  /**
   * `path`: the sheep's route with `rest` after it; `href`: a sheep's page address (another
   * shepherd's sheep's work goes to that shepherd through this panel, sheep.js).
   */
  constructor(agentId, say, refresh, path = (rest) => sheepPath(agentId, rest), href = sheepHref) {
    this.agentId = agentId;
    this.path = path;
    this.href = href;
    this.say = say;
    this.refresh = refresh;
    this.state = h("p", { class: "branch-state", role: "status" });
    this.note = h("p", { class: "note", role: "status" });
    this.squash = h("input", { id: "land-squash", name: "squash", type: "checkbox" });
    this.message = h("input", { id: "land-message", name: "message", type: "text", autocomplete: "off" });
    this.landForm = h(
      "form",
      { class: "land-form" },
      h("p", { class: "start-field" }, h("label", { for: "land-message", class: "field-label" }, "Commit message (optional)"), this.message),
      h(
        "div",
        { class: "form-row" },
        h("label", { for: "land-squash", class: "mode" }, this.squash, " Squash"),
        h("button", { type: "submit", "data-action": "land" }, "Land"),
        h("button", { type: "button", class: "secondary", "data-action": "sync", onclick: () => this.run("sync", {}) }, "Sync"),
      ),
    );
    oneAtATime(this.landForm, () => this.land());
    this.removeBtn = h(
      "button",
      { type: "button", class: "danger-soft", "data-action": "remove-worktree", onclick: () => this.run("remove-worktree", {}) },
      "Remove worktree",
    );
    this.resumeBtn = h("button", { type: "button", class: "secondary", "data-action": "resume", onclick: () => this.resume() }, "Resume");
    this.worktreePart = h("div", {}, this.state, this.landForm);
    this.box = h(
      "section",
      { class: "panel-box work", "aria-labelledby": "h-work", hidden: true },
      h("h3", { id: "h-work" }, "Its work"),
      this.worktreePart,
      h("div", { class: "form-row work-more" }, this.removeBtn, this.resumeBtn),
      this.note,
    );
  }

  /** Shown for an isolated sheep, or one that ended (Resume); the branch's state read again. */
  draw(d) {
    const ended = d.state === "closed" || d.state === "exited";
    const isolated = Boolean(d.worktree);
    this.box.hidden = !isolated && !ended;
    this.worktreePart.hidden = !isolated;
    this.resumeBtn.hidden = !ended;
    // The tool's close with removeWorktree closes a live sheep too: from here only a closed one's.
    this.removeBtn.hidden = !isolated || d.state !== "closed";
    if (isolated) this.loadBranch();
  }

  async loadBranch() {
    try {
      fill(this.state, branchText(await get(this.path("/branch"))));
    } catch (e) {
      fill(this.state, errorText(e));
    }
  }

  async land() {
    const body = {};
    if (this.squash.checked) body.squash = true;
    if (this.message.value.trim()) body.message = this.message.value;
    await this.run("land", body);
  }

  async run(action, body) {
    fill(this.note, `${action}…`);
    try {
      const r = await post(this.path(`/${action}`), body);
      const words = {
        land: r?.landed
          ? `Landed ${asText(r.branch)} into ${asText(r.into)}${r.commit ? ` (${asText(r.commit).slice(0, 12)})` : ""}.`
          : "Nothing to land: your branch holds it all.",
        sync: r?.synced
          ? `Synced ${asText(r.from)} into ${asText(r.branch)}${Array.isArray(r.conflicts) && r.conflicts.length ? `: conflicts in ${r.conflicts.map(asText).join(", ")}` : ""}.`
          : "Already in sync.",
        "remove-worktree": "Its worktree was removed.",
      }[action];
      fill(this.note, words);
      this.say(words);
      if (action === "land") this.message.value = "";
    } catch (e) {
      fill(this.note, errorText(e));
    }
    this.refresh();
  }

  async resume() {
    fill(this.note, "Resuming…");
    try {
      const r = await post(this.path("/resume"), {});
      fill(this.note, "");
      this.say(`${asText(r?.label) || asText(r?.agentId)} resumed.`);
      if (r?.agentId) location.hash = this.href(r.agentId);
    } catch (e) {
      fill(this.note, errorText(e));
    }
  }
}
