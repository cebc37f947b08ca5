/**
 * The panel's entry: trades the URL's token for the session cookie (and drops it from the
 * address bar), draws the herd or one sheep by the address's fragment, and keeps both current
 * from the events stream, which reconnects by itself and says so.
 */
import { ApiError, get, Live, openSession } from "./api.js";
import { fill, h, tick } from "./dom.js";
import { renderFleet, totalsText } from "./fleet.js";
import { showNotice } from "./notices.js";
import { SheepView } from "./sheep.js";
import { startForm } from "./start.js";
import { drawDelegations, herdQuery, historyFilter, todayText } from "./history.js";
import { drawShepherds, shepherdsSection } from "./shepherds.js";
import { attentionOf, notifyButton, notifyEvent, titleWith } from "./attention.js";

const fleetRoot = document.getElementById("fleet");
const fleetHosts = document.getElementById("fleet-hosts");
const sheepRoot = document.getElementById("sheep");
const totalsEl = document.getElementById("totals");
const connEl = document.getElementById("conn");
const noticeEl = document.getElementById("notice");
const announceEl = document.getElementById("announce");

let view;
let fleetData;
/** The background delegations, each a group of its tasks: drawn with the herd. */
const delegationsEl = h("section", { class: "delegations-box", "aria-label": "Delegations" });

let sayTimer;

/** Shown for a few seconds, and said to a screen reader (a status region). */
function say(text) {
  fill(announceEl, text);
  announceEl.hidden = false;
  clearTimeout(sayTimer);
  sayTimer = setTimeout(() => {
    announceEl.hidden = true;
    fill(announceEl);
  }, 6000);
}

function notice(text) {
  noticeEl.hidden = !text;
  fill(noticeEl, text ?? "");
}

/** Runs `fn` now, or once more right after the run in flight: never two at once, never a change missed. */
function coalesced(fn) {
  let running = false;
  let again = false;
  const run = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await fn();
      } while (again);
    } finally {
      running = false;
    }
  };
  return run;
}

/** What a page whose session ended says: why it may have, and how to get a new address. */
const SIGNED_OUT =
  "Not signed in: this page's session ended (a session ends after 12 hours unused, and when the panel is turned off or cannot come back after a reload). For a new address, type /shepherd panel url in the shepherd's pi and open what it prints.";

/** This user's other shepherds, below the herd (shepherds.js). */
const shepherdsEl = shepherdsSection();

/** Sheep of the other shepherds that wait for the person, as last read (shepherds.js). */
let siblingsWaiting = 0;

const refreshFleet = coalesced(async () => {
  try {
    fleetData = await get(`/api/v1/sheep${herdQuery()}`);
    notice(undefined);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) notice(SIGNED_OUT);
    else notice(e instanceof ApiError ? e.text : String(e));
    return;
  }
  fill(totalsEl, totalsText(fleetData.totals), todayText(fleetData.totals));
  if (!view) {
    renderFleet(fleetHosts, fleetData);
    // A filter that takes none says so, not that the herd is empty.
    if (!fleetData.sheep?.length && herdQuery()) fill(fleetHosts, h("p", { class: "empty" }, "No sheep kept match this filter."));
    // The title follows the herd at once; the other shepherds' count joins it once they answered.
    const herdTitle = () => titleWith(waitingCount(), `${fleetData.totals?.sheep ?? fleetData.sheep?.length ?? 0} sheep · pi-shepherd`);
    document.title = herdTitle();
    await drawDelegations(delegationsEl);
    siblingsWaiting = await drawShepherds(shepherdsEl);
    document.title = herdTitle();
  } else retitle();
});

/** The other shepherds read again by themselves (a sheep open, or the page in the background): the title's count kept true. */
const refreshSiblings = coalesced(async () => {
  siblingsWaiting = await drawShepherds(shepherdsEl);
  retitle();
});

/** A sheep's page names the sheep in the title (sheep.js); the count of sheep waiting goes before it there too. */
function retitle() {
  document.title = titleWith(waitingCount(), document.title.replace(/^\(\d+\) /, ""));
}

const refreshView = coalesced(async () => {
  await view?.refresh();
  if (view) retitle();
});

/** Draws what the address names; `moved`: the person went there, so focus follows (not on first load). */
function route(moved = false) {
  // `#/sheep/<id>`: this shepherd's sheep; `#/shepherd/<pid>/sheep/<id>`: another of this user's shepherds'.
  const m = /^#\/(?:shepherd\/([1-9][0-9]{0,9})\/)?sheep\/([^/]+)$/.exec(location.hash);
  let agentId;
  try {
    agentId = m ? decodeURIComponent(m[2]) : undefined;
  } catch {
    agentId = undefined; // an address no page of ours makes (%E0): the herd instead
  }
  const shepherdId = agentId === undefined ? undefined : m?.[1];
  if (view && view.agentId === agentId && view.shepherd?.id === shepherdId) return;
  view?.dispose();
  view = undefined;
  if (agentId) {
    fleetRoot.hidden = true;
    sheepRoot.hidden = false;
    view = new SheepView(sheepRoot, agentId, say, shepherdId ? { id: shepherdId, name: `pi ${shepherdId}` } : undefined);
    if (moved) view.focus();
    refreshView();
  } else {
    sheepRoot.hidden = true;
    fill(sheepRoot);
    fleetRoot.hidden = false;
    if (fleetData) renderFleet(fleetHosts, fleetData);
    if (moved) document.getElementById("fleet-title")?.focus();
    refreshFleet();
  }
}

/** Sheep of the herd read last that wait for the person (attention.js), the other shepherds' too. */
function waitingCount() {
  return (fleetData?.sheep ?? []).filter((s) => attentionOf(s)).length + siblingsWaiting;
}

function onEvent(type, data, id) {
  if (type === "notify") {
    showNotice(data);
    return;
  }
  notifyEvent(type, data, id, (agentId) => fleetData?.sheep?.find((s) => s.agentId === agentId)?.label);
  refreshFleet();
  if (!view) return;
  const agentId = data && typeof data === "object" ? data.agentId : undefined;
  if (type === "reset" || agentId === undefined || agentId === view.agentId) refreshView();
}

const CONN = {
  connecting: ["conn-wait", "Connecting…"],
  live: ["conn-live", "Live"],
  lost: ["conn-lost", "Connection lost: reconnecting…"],
  back: ["conn-live", "Reconnected"],
};

function onStatus(status) {
  const [cls, text] = CONN[status] ?? CONN.connecting;
  connEl.className = `conn ${cls}`;
  connEl.dataset.state = status;
  fill(connEl, text);
  // Lost: one read says why (the shepherd gone, or this page's session let go by a new token).
  if (status === "lost") refreshFleet();
  // What happened while the stream was down is read afresh.
  if (status === "back") {
    refreshFleet();
    refreshView();
  }
}

async function main() {
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (m) {
    try {
      await openSession(decodeURIComponent(m[1]));
    } catch (e) {
      notice(
        `The shepherd refused this address's token (${e instanceof ApiError ? e.text : String(e)}). A token ends after 12 hours unused: /shepherd panel url in the shepherd's pi prints a new address.`,
      );
    }
    // The token leaves the address bar and the history at once, whatever the answer.
    history.replaceState(null, "", `${location.pathname}${location.search}`);
  }
  document.getElementById("fleet-title").after(historyFilter(refreshFleet));
  fleetRoot.append(delegationsEl, startForm(say));
  fleetHosts.after(shepherdsEl);
  // One permission serves the page's attention and the notify setting's browser channel: one button asks it.
  document.querySelector("header.top").append(notifyButton());
  // Other shepherds' events do not reach this page: their herds are read again every few seconds,
  // and one of their sheep open here every few.
  setInterval(() => {
    if (!view && !document.hidden) refreshFleet();
    // Their sheep that wait are counted in the title and notified with a sheep open or the page in the background too.
    else refreshSiblings();
  }, 10_000);
  setInterval(() => {
    if (view?.shepherd && !document.hidden) refreshView();
  }, 3000);
  window.addEventListener("hashchange", () => route(true));
  setInterval(() => tick(), 1000);
  route();
  await refreshFleet();
  new Live(onEvent, onStatus).open();
}

main();
