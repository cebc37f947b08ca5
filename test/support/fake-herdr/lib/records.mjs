// JSON record shapes of herdr 0.8.0 (PaneInfo, TabInfo, WorkspaceInfo, AgentInfo).
// Optional fields are left out when empty, as herdr does.

const STATUS_RANK = ["unknown", "idle", "done", "working", "blocked"];

/** @param {string[]} statuses */
function rollup(statuses) {
  let best = "unknown";
  for (const s of statuses) if (STATUS_RANK.indexOf(s) > STATUS_RANK.indexOf(best)) best = s;
  return best;
}

/**
 * @typedef {{ agent?: string, status: string }} AgentView
 * @typedef {(paneId: string) => AgentView | undefined} AgentLookup
 */

/** @param {any} state @param {string} id @param {AgentLookup} agentOf */
export function paneInfo(state, id, agentOf) {
  const p = state.panes[id];
  const agent = agentOf(id);
  /** @type {Record<string, unknown>} */
  const info = {
    pane_id: p.id,
    terminal_id: p.terminalId,
    workspace_id: p.workspaceId,
    tab_id: p.tabId,
    focused: state.focusedPane === id,
    agent_status: agent?.status ?? "unknown",
    revision: p.revision,
  };
  if (p.cwd) info.cwd = p.cwd;
  if (p.label) info.label = p.label;
  if (agent?.agent) info.agent = agent.agent;
  return info;
}

/** @param {any} state @param {string} id @param {AgentLookup} agentOf */
export function tabInfo(state, id, agentOf) {
  const t = state.tabs[id];
  return {
    tab_id: t.id,
    workspace_id: t.workspaceId,
    number: t.number,
    label: t.label,
    focused: t.panes.includes(state.focusedPane),
    pane_count: t.panes.length,
    agent_status: rollup(t.panes.map((/** @type {string} */ p) => agentOf(p)?.status ?? "unknown")),
  };
}

/** @param {any} state @param {string} id @param {AgentLookup} agentOf */
export function workspaceInfo(state, id, agentOf) {
  const w = state.workspaces[id];
  const panes = w.tabs.flatMap((/** @type {string} */ t) => state.tabs[t].panes);
  const focusedTab = w.tabs.find((/** @type {string} */ t) => state.tabs[t].panes.includes(state.focusedPane));
  return {
    workspace_id: w.id,
    number: w.number,
    label: w.label,
    focused: focusedTab !== undefined,
    pane_count: panes.length,
    tab_count: w.tabs.length,
    active_tab_id: focusedTab ?? w.tabs[0],
    agent_status: rollup(panes.map((/** @type {string} */ p) => agentOf(p)?.status ?? "unknown")),
  };
}

/** @param {any} state @param {string} id @param {AgentView} agent */
export function agentInfo(state, id, agent) {
  const p = state.panes[id];
  /** @type {Record<string, unknown>} */
  const info = {
    terminal_id: p.terminalId,
    agent_status: agent.status,
    workspace_id: p.workspaceId,
    tab_id: p.tabId,
    pane_id: p.id,
    focused: state.focusedPane === id,
    state_change_seq: p.agent?.seq ?? 0,
    revision: p.revision,
  };
  if (agent.agent) info.agent = agent.agent;
  if (p.cwd) info.cwd = p.cwd;
  return info;
}
