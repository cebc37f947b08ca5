/**
 * This user's other shepherds on this machine, below the herd: each one's sheep (label, state, what
 * it works on) read through this panel (`/api/v1/shepherds/:id/api/v1/sheep`), with the shepherd
 * named on each table; a sheep's label opens it here (`#/shepherd/<pid>/sheep/<id>`). Their events
 * are not streamed here, so they are read again on every refresh of the herd and every few seconds
 * (in the background too): a sheep of theirs that waits for the person is marked, counted in the
 * tab's title and told by a notification like this shepherd's own (attention.js).
 */
import { ApiError, get } from "./api.js";
import { attentionOf, notifySiblings } from "./attention.js";
import { asText, fill, h, stateBadge } from "./dom.js";

/** The section the page shows them in; hidden while this is the user's only shepherd. */
export function shepherdsSection() {
  return h(
    "section",
    { id: "shepherds", "aria-labelledby": "shepherds-title", hidden: true },
    h("h2", { id: "shepherds-title", tabindex: "-1" }, "Your other shepherds"),
    h("div", { id: "shepherds-list" }),
  );
}

function shepherdTable(s, herd, failure) {
  const name = `pi ${asText(s.pid)} · ${asText(s.cwd)}${s.stable ? " · stable port" : ""}`;
  const caption = h("h3", { class: "shepherd-name" }, failure ? name : `${name} · ${herd.sheep?.length ?? 0} sheep`);
  if (failure) return h("section", { class: "host shepherd", "data-shepherd": asText(s.id) }, caption, h("p", { class: "muted" }, failure));
  const sheep = Array.isArray(herd.sheep) ? herd.sheep : [];
  return h(
    "section",
    { class: "host shepherd", "data-shepherd": asText(s.id) },
    caption,
    sheep.length === 0
      ? h("p", { class: "empty" }, "No sheep.")
      : h(
          "table",
          { class: "fleet-table" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Sheep"), h("th", { scope: "col" }, "State"), h("th", { scope: "col" }, "Shepherd"))),
          h(
            "tbody",
            {},
            ...sheep.map((x) =>
              h(
                "tr",
                { class: attentionOf(x) ? "sibling-row needs-you" : "sibling-row", "data-agent-id": asText(x.agentId) },
                h(
                  "td",
                  {},
                  // Opened here; what is done there goes to that shepherd's own routes (sheep.js).
                  h(
                    "a",
                    { class: "sibling-link", href: `#/shepherd/${encodeURIComponent(asText(s.id))}/sheep/${encodeURIComponent(asText(x.agentId))}` },
                    asText(x.label) || asText(x.agentId),
                  ),
                  attentionOf(x) ? h("span", { class: "tag tag-attention", title: attentionOf(x) }, `waits for you: ${attentionOf(x)}`) : "",
                ),
                h("td", {}, stateBadge(asText(x.state))),
                h("td", { class: "muted small" }, `pi ${asText(s.pid)}`),
              ),
            ),
          ),
        ),
  );
}

/**
 * Reads the other shepherds and their herds, and draws them; the section stays hidden while there
 * are none. Returns how many of their sheep wait for the person (for the tab's title).
 */
export async function drawShepherds(section) {
  let list;
  try {
    list = (await get("/api/v1/shepherds")).shepherds ?? [];
  } catch {
    return 0; // the herd's own read says why
  }
  const others = list.filter((s) => !s.self);
  section.hidden = others.length === 0;
  if (others.length === 0) return 0;
  const waiting = [];
  const tables = await Promise.all(
    others.map(async (s) => {
      try {
        const herd = await get(`/api/v1/shepherds/${encodeURIComponent(s.id)}/api/v1/sheep`);
        for (const x of Array.isArray(herd?.sheep) ? herd.sheep : []) {
          const why = attentionOf(x);
          if (why) waiting.push({ shepherdId: asText(s.id), agentId: asText(x.agentId), label: asText(x.label), why });
        }
        return shepherdTable(s, herd);
      } catch (e) {
        return shepherdTable(s, undefined, e instanceof ApiError ? e.text : String(e));
      }
    }),
  );
  fill(section.querySelector("#shepherds-list"), ...tables);
  notifySiblings(waiting);
  return waiting.length;
}
