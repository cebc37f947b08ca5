// Layout commands: workspaces, tabs, splits and closes, each backed by a tmux session,
// window or pane. New items are unfocused unless `--focus` is given (herdr 0.5.6+).
import { parseArgs, parseEnvPairs } from "./args.mjs";
import { ApiError, UsageError } from "./errors.mjs";
import { paneInfo, tabInfo, workspaceInfo } from "./records.mjs";
import { allocPane, allocTab, allocWorkspace, newTerminalId, removePane, removeTab, removeWorkspace } from "./state.mjs";
import { envFlags, paneShellArgv, tmuxLiteralPath } from "./tmux.mjs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { atLeast, since } from "./versions.mjs";

/** The fake's own executable, which 0.8.1+ names in HERDR_BIN_PATH. */
const BIN = fileURLToPath(new URL("../herdr", import.meta.url));

const CREATE_SPEC = { values: ["--cwd", "--label"], repeated: ["--env"], flags: ["--focus", "--no-focus"] };

/**
 * The environment herdr gives every pane shell; caller `--env` pairs cannot override it.
 * @param {any} ctx @param {Record<string, string>} extra @param {string} ws @param {string} tab @param {string} pane
 */
function paneEnv(ctx, extra, ws, tab, pane) {
  const own = {
    HERDR_ENV: "1",
    HERDR_SOCKET_PATH: ctx.socketPath,
    HERDR_WORKSPACE_ID: ws,
    HERDR_TAB_ID: tab,
    HERDR_PANE_ID: pane,
    // So that `herdr` run inside a pane reaches this same fake server.
    FAKE_HERDR_STATE_DIR: ctx.stateDir,
    FAKE_HERDR_TMUX_SOCKET: ctx.tmuxSocket,
    // A `herdr` run in the pane is the server's own version (the one installed beside it), and
    // 0.8.1+ names that binary in HERDR_BIN_PATH.
    FAKE_HERDR_VERSION: ctx.version,
    ...(atLeast(ctx.version, since.binPathInPanes) ? { HERDR_BIN_PATH: BIN } : {}),
  };
  const kept = Object.fromEntries(Object.entries(extra).filter(([k]) => !(k in own)));
  return { ...kept, ...own };
}

/** @param {string | undefined} cwd */
function cwdFlags(cwd) {
  return cwd === undefined ? [] : ["-c", tmuxLiteralPath(cwd)];
}

/** @param {any} ctx @param {{ id: string, workspaceId: string, tabId: string, tmux: string, cwd?: string }} p */
function addPane(ctx, p) {
  ctx.state.panes[p.id] = { ...p, terminalId: newTerminalId(), revision: 0 };
  ctx.state.tabs[p.tabId].panes.push(p.id);
}

/** @param {any} ctx @param {string[]} args */
export function workspaceCreate(ctx, args) {
  const { opts, multi, focus } = parseArgs(args, CREATE_SPEC);
  const extra = parseEnvPairs(multi["--env"]);
  const { state } = ctx;
  const { id, number } = allocWorkspace(state);
  const cwd = opts["--cwd"];
  const ws = {
    id,
    number,
    label: opts["--label"] ?? (cwd ? path.basename(cwd) : String(number)),
    nextTab: 1,
    nextPane: 1,
    tabs: /** @type {string[]} */ ([]),
    tmuxSession: "",
  };
  const tab = allocTab(ws);
  const paneId = allocPane(ws);
  const out = ctx.tmux.must([
    "new-session",
    "-d",
    "-P",
    "-F",
    "#{session_id} #{window_id} #{pane_id}",
    "-s",
    `herdr-${id}`,
    "-x",
    "240",
    "-y",
    "80",
    ...cwdFlags(cwd),
    ...envFlags(paneEnv(ctx, extra, id, tab.id, paneId)),
    "--",
    ...paneShellArgv(ctx.env),
  ]);
  const [session, window, tmuxPane] = out.trim().split(" ");
  ws.tmuxSession = session;
  ws.tabs.push(tab.id);
  state.workspaces[id] = ws;
  state.tabs[tab.id] = { id: tab.id, workspaceId: id, number: tab.number, label: String(tab.number), tmuxWindow: window, panes: [] };
  addPane(ctx, { id: paneId, workspaceId: id, tabId: tab.id, tmux: tmuxPane, cwd });
  if (focus) state.focusedPane = paneId;
  return {
    json: {
      type: "workspace_created",
      workspace: workspaceInfo(state, id, ctx.agentOf),
      tab: tabInfo(state, tab.id, ctx.agentOf),
      root_pane: paneInfo(state, paneId, ctx.agentOf),
    },
  };
}

/** The workspace herdr's UI shows: the focused pane's, else the first one. */
function activeWorkspace(/** @type {any} */ state) {
  const focused = state.focusedPane && state.panes[state.focusedPane];
  if (focused) return focused.workspaceId;
  const first = Object.keys(state.workspaces)[0];
  if (!first) throw new ApiError("workspace_not_found", "no active workspace");
  return first;
}

/** @param {any} ctx @param {string[]} args */
export function tabCreate(ctx, args) {
  const { opts, multi, focus } = parseArgs(args, { ...CREATE_SPEC, values: [...CREATE_SPEC.values, "--workspace"] });
  const extra = parseEnvPairs(multi["--env"]);
  const { state } = ctx;
  const wsId = opts["--workspace"] ?? activeWorkspace(state);
  const ws = state.workspaces[wsId];
  if (!ws) throw new ApiError("workspace_not_found", `workspace ${wsId} not found`);
  const tab = allocTab(ws);
  const paneId = allocPane(ws);
  const cwd = opts["--cwd"];
  const out = ctx.tmux.must([
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{window_id} #{pane_id}",
    "-t",
    `${ws.tmuxSession}:`,
    ...cwdFlags(cwd),
    ...envFlags(paneEnv(ctx, extra, ws.id, tab.id, paneId)),
    "--",
    ...paneShellArgv(ctx.env),
  ]);
  const [window, tmuxPane] = out.trim().split(" ");
  ws.tabs.push(tab.id);
  state.tabs[tab.id] = {
    id: tab.id,
    workspaceId: ws.id,
    number: tab.number,
    label: opts["--label"] ?? String(tab.number),
    tmuxWindow: window,
    panes: [],
  };
  addPane(ctx, { id: paneId, workspaceId: ws.id, tabId: tab.id, tmux: tmuxPane, cwd });
  if (focus) state.focusedPane = paneId;
  return { json: { type: "tab_created", tab: tabInfo(state, tab.id, ctx.agentOf), root_pane: paneInfo(state, paneId, ctx.agentOf) } };
}

/**
 * Resolves a pane target from `<id>`, `--pane ID` or `--current`; with none of them herdr
 * splits whatever the UI has focused.
 * @param {any} ctx @param {{ positionals: string[], opts: Record<string, string>, flags: Set<string> }} parsed
 */
function splitTarget(ctx, parsed) {
  const given = [parsed.positionals[0], parsed.opts["--pane"], parsed.flags.has("--current") ? "current" : undefined];
  if (given.filter((g) => g !== undefined).length > 1) throw new UsageError("give only one of <pane_id>, --pane, --current");
  if (parsed.flags.has("--current")) {
    const own = ctx.env.HERDR_PANE_ID;
    if (!own) throw new UsageError("--current requires HERDR_PANE_ID");
    return own;
  }
  const explicit = parsed.positionals[0] ?? parsed.opts["--pane"];
  if (explicit !== undefined) return explicit;
  if (!ctx.state.focusedPane) throw new ApiError("pane_not_found", "no focused pane");
  return ctx.state.focusedPane;
}

/** @param {any} ctx @param {string[]} args */
export function paneSplit(ctx, args) {
  const parsed = parseArgs(args, {
    values: ["--pane", "--direction", "--ratio", "--cwd"],
    repeated: ["--env"],
    flags: ["--current", "--focus", "--no-focus"],
    maxPositionals: 1,
  });
  const direction = parsed.opts["--direction"];
  if (direction !== "right" && direction !== "down") throw new UsageError("--direction must be right or down");
  const ratio = parsed.opts["--ratio"];
  if (ratio !== undefined && !(Number(ratio) > 0 && Number(ratio) < 1)) throw new UsageError("--ratio must be between 0 and 1");
  const extra = parseEnvPairs(parsed.multi["--env"]);
  const { state } = ctx;
  const targetId = splitTarget(ctx, parsed);
  const target = state.panes[targetId];
  if (!target) throw new ApiError("pane_not_found", `pane ${targetId} not found`);
  const ws = state.workspaces[target.workspaceId];
  const paneId = allocPane(ws);
  const cwd = parsed.opts["--cwd"];
  // Without --cwd herdr's default policy follows the source pane.
  const cwdArgs = cwd === undefined ? ["-c", "#{pane_current_path}"] : cwdFlags(cwd);
  const r = ctx.tmux.run([
    "split-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    "-t",
    target.tmux,
    direction === "right" ? "-h" : "-v",
    ...cwdArgs,
    ...envFlags(paneEnv(ctx, extra, ws.id, target.tabId, paneId)),
    "--",
    ...paneShellArgv(ctx.env),
  ]);
  if (!r.ok) throw new ApiError("pane_split_failed", `could not split pane ${targetId}: ${r.stderr}`);
  addPane(ctx, { id: paneId, workspaceId: ws.id, tabId: target.tabId, tmux: r.stdout.trim(), cwd });
  if (parsed.focus) state.focusedPane = paneId;
  return { json: { type: "pane_info", pane: paneInfo(state, paneId, ctx.agentOf) } };
}

/** @param {any} ctx @param {string[]} args */
export function paneClose(ctx, args) {
  const [id] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  const pane = ctx.state.panes[id];
  if (!pane) throw new ApiError("pane_not_found", `pane ${id} not found`);
  ctx.tmux.run(["kill-pane", "-t", pane.tmux]);
  removePane(ctx.state, id);
  return { json: { type: "ok" } };
}

/** @param {any} ctx @param {string[]} args */
export function tabClose(ctx, args) {
  const [id] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  const tab = ctx.state.tabs[id];
  if (!tab) throw new ApiError("tab_not_found", `tab ${id} not found`);
  ctx.tmux.run(["kill-window", "-t", tab.tmuxWindow]);
  removeTab(ctx.state, id);
  return { json: { type: "ok" } };
}

/** @param {any} ctx @param {string[]} args */
export function workspaceClose(ctx, args) {
  const [id] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  const ws = ctx.state.workspaces[id];
  if (!ws) throw new ApiError("workspace_not_found", `workspace ${id} not found`);
  ctx.tmux.run(["kill-session", "-t", ws.tmuxSession]);
  removeWorkspace(ctx.state, id);
  return { json: { type: "ok" } };
}

/** @param {any} ctx @param {string[]} args */
export function workspaceList(ctx, args) {
  parseArgs(args, {});
  const workspaces = Object.keys(ctx.state.workspaces).map((id) => workspaceInfo(ctx.state, id, ctx.agentOf));
  return { json: { type: "workspace_list", workspaces } };
}

/** @param {any} ctx @param {string[]} args */
export function workspaceGet(ctx, args) {
  const [id] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  if (!ctx.state.workspaces[id]) throw new ApiError("workspace_not_found", `workspace ${id} not found`);
  return { json: { type: "workspace_info", workspace: workspaceInfo(ctx.state, id, ctx.agentOf) } };
}

/** @param {any} ctx @param {string[]} args */
export function tabList(ctx, args) {
  const { opts } = parseArgs(args, { values: ["--workspace"] });
  const wsId = opts["--workspace"];
  if (wsId !== undefined && !ctx.state.workspaces[wsId]) throw new ApiError("workspace_not_found", `workspace ${wsId} not found`);
  const tabs = Object.values(ctx.state.tabs)
    .filter((t) => wsId === undefined || t.workspaceId === wsId)
    .map((t) => tabInfo(ctx.state, t.id, ctx.agentOf));
  return { json: { type: "tab_list", tabs } };
}

/** @param {any} ctx @param {string[]} args */
export function tabGet(ctx, args) {
  const [id] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  if (!ctx.state.tabs[id]) throw new ApiError("tab_not_found", `tab ${id} not found`);
  return { json: { type: "tab_info", tab: tabInfo(ctx.state, id, ctx.agentOf) } };
}
