// Pane commands other than layout: naming, lookup, input, reading and agent reports.
// Input really reaches the tmux pane, so whatever a test types there actually runs.
import { parseArgs } from "./args.mjs";
import { ApiError, UsageError } from "./errors.mjs";
import { paneInfo } from "./records.mjs";
import { tmuxKey } from "./tmux.mjs";
import { atLeast, since } from "./versions.mjs";

/** @param {any} ctx @param {string} id */
function pane(ctx, id) {
  const p = ctx.state.panes[id];
  if (!p) throw new ApiError("pane_not_found", `pane ${id} not found`);
  return p;
}

/** @param {any} ctx @param {string[]} args */
export function paneRename(ctx, args) {
  const { positionals, flags } = parseArgs(args, { flags: ["--clear"], minPositionals: 1, maxPositionals: Infinity });
  const [id, ...words] = positionals;
  const clear = flags.has("--clear");
  if (clear === words.length > 0) throw new UsageError("give a label or --clear");
  const p = pane(ctx, id);
  if (clear) delete p.label;
  else p.label = words.join(" ");
  return { json: { type: "pane_info", pane: paneInfo(ctx.state, id, ctx.agentOf) } };
}

/** @param {any} ctx @param {string[]} args */
export function paneGet(ctx, args) {
  const [id] = parseArgs(args, { minPositionals: 1, maxPositionals: 1 }).positionals;
  pane(ctx, id);
  return { json: { type: "pane_info", pane: paneInfo(ctx.state, id, ctx.agentOf) } };
}

/** @param {any} ctx @param {string[]} args */
export function paneList(ctx, args) {
  const { opts } = parseArgs(args, { values: ["--workspace"] });
  const wsId = opts["--workspace"];
  if (wsId !== undefined && !ctx.state.workspaces[wsId]) throw new ApiError("workspace_not_found", `workspace ${wsId} not found`);
  const panes = Object.values(ctx.state.panes)
    .filter((p) => wsId === undefined || p.workspaceId === wsId)
    .map((p) => paneInfo(ctx.state, p.id, ctx.agentOf));
  return { json: { type: "pane_list", panes } };
}

/** @param {any} ctx @param {string[]} args */
export function paneCurrent(ctx, args) {
  const { opts, flags } = parseArgs(args, { values: ["--pane"], flags: ["--current"] });
  // #2900 (open): from 0.8.1 (`v0.8.2:src/cli/pane.rs`) `--current` without HERDR_PANE_ID quietly takes
  // the pane the UI has focused, maybe the user's; only `pane split` and `pane input` still refuse it.
  const focusedFallback = flags.has("--current") && !ctx.env.HERDR_PANE_ID && atLeast(ctx.version, since.agentBlocked);
  if (flags.has("--current") && !ctx.env.HERDR_PANE_ID && !focusedFallback) throw new UsageError("--current requires HERDR_PANE_ID");
  const id = opts["--pane"] ?? ctx.env.HERDR_PANE_ID ?? (focusedFallback ? ctx.state.focusedPane : undefined);
  if (!id) throw new UsageError("pane current needs --pane ID or HERDR_PANE_ID");
  pane(ctx, id);
  return { json: { type: "pane_current", pane: paneInfo(ctx.state, id, ctx.agentOf) } };
}

/** @param {any} ctx @param {string[]} args */
export function paneRun(ctx, args) {
  const [id, ...words] = parseArgs(args, { minPositionals: 2, maxPositionals: Infinity }).positionals;
  const p = pane(ctx, id);
  typeText(ctx, p, words.join(" "));
  if (!ctx.tmux.run(["send-keys", "-t", p.tmux, "Enter"]).ok) throw new ApiError("pane_send_failed", `could not send to pane ${id}`);
  return {};
}

/** @param {any} ctx @param {string[]} args */
export function paneSendText(ctx, args) {
  const [id, ...words] = parseArgs(args, { minPositionals: 2, maxPositionals: Infinity }).positionals;
  typeText(ctx, pane(ctx, id), words.join(" "));
  return {};
}

/** @param {any} ctx @param {any} p @param {string} text */
function typeText(ctx, p, text) {
  if (!ctx.tmux.run(["send-keys", "-t", p.tmux, "-l", "--", text]).ok) {
    throw new ApiError("pane_send_failed", `could not send to pane ${p.id}`);
  }
  p.revision += 1;
}

/** @param {any} ctx @param {string[]} args */
export function paneSendKeys(ctx, args) {
  const [id, ...keys] = parseArgs(args, { minPositionals: 2, maxPositionals: Infinity }).positionals;
  const p = pane(ctx, id);
  const mapped = keys.map((k) => {
    const m = tmuxKey(k);
    if (m === undefined) throw new ApiError("invalid_key", `invalid key: ${k}`);
    return m;
  });
  for (const k of mapped) ctx.tmux.must(["send-keys", "-t", p.tmux, k]);
  p.revision += 1;
  return {};
}

const SOURCES = ["visible", "recent", "recent-unwrapped", "detection"];

/** @param {any} ctx @param {string[]} args */
export function paneRead(ctx, args) {
  const { opts, flags, positionals } = parseArgs(args, {
    values: ["--source", "--lines", "--format"],
    flags: ["--ansi", "--raw"],
    minPositionals: 1,
    maxPositionals: 1,
    idFirst: true,
  });
  const source = opts["--source"] ?? "recent";
  if (!SOURCES.includes(source)) throw new UsageError(`invalid --source: ${source}`);
  const format = opts["--format"] ?? "text";
  if (format !== "text" && format !== "ansi") throw new UsageError(`invalid --format: ${format}`);
  let lines = opts["--lines"] === undefined ? undefined : Number(opts["--lines"]);
  if (lines !== undefined && !(Number.isInteger(lines) && lines > 0)) throw new UsageError("--lines must be a positive integer");
  const recent = source.startsWith("recent");
  if (recent && lines === undefined) lines = 80;
  const keepAnsi = format === "ansi" || flags.has("--ansi") || flags.has("--raw");

  const p = pane(ctx, positionals[0]);
  // #3444: before 0.9.0 `recent` reads came back empty while the output still fitted the viewport.
  // herdr-09 saw it on macOS and Windows; the fake shows it on every platform (the safe reading),
  // so a client's fallback is exercised on Linux too.
  if (recent && !atLeast(ctx.version, since.recentReadsFixed) && ctx.tmux.must(["display-message", "-p", "-t", p.tmux, "#{history_size}"]).trim() === "0") {
    return { text: "" };
  }
  const capture = ["capture-pane", "-p", "-t", p.tmux];
  if (keepAnsi) capture.push("-e");
  if (source === "recent-unwrapped") capture.push("-J");
  if (recent) capture.push("-S", "-");
  /** @type {string[]} */
  let rows = ctx.tmux.must(capture).split("\n");
  if (!keepAnsi) rows = rows.map((r) => r.trimEnd());
  // Blank rows below the cursor are screen padding, not output.
  while (rows.length > 0 && rows[rows.length - 1].trim() === "") rows.pop();
  if (lines !== undefined) rows = rows.slice(-lines);
  return { text: rows.join("\n") };
}

const REPORT_STATES = ["idle", "working", "blocked", "unknown"];

/** @param {any} ctx @param {string[]} args */
export function paneReportAgent(ctx, args) {
  const { opts, positionals } = parseArgs(args, {
    values: ["--source", "--agent", "--state", "--message", "--seq", "--agent-session-id", "--agent-session-path"],
    minPositionals: 1,
    maxPositionals: 1,
  });
  for (const required of ["--source", "--agent", "--state"]) {
    if (opts[required] === undefined) throw new UsageError(`missing ${required}`);
  }
  const state = opts["--state"];
  const seq = opts["--seq"] === undefined ? undefined : Number(opts["--seq"]);
  // herdr lets these invalid values escape as a Rust io::Error: plain text, exit 1.
  if (!REPORT_STATES.includes(state) || (seq !== undefined && !Number.isInteger(seq))) {
    return { rawError: 'Error: Custom { kind: InvalidInput, error: "invalid report-agent value" }\n', exit: 1 };
  }
  if (opts["--agent"].trim() === "") throw new ApiError("invalid_agent", "agent label must not be empty");
  const p = pane(ctx, positionals[0]);
  const prev = p.agent;
  if (prev && prev.source === opts["--source"] && seq !== undefined && prev.reportSeq !== undefined && seq <= prev.reportSeq) {
    return {}; // stale report: accepted and ignored
  }
  p.agent = {
    source: opts["--source"],
    agent: opts["--agent"],
    state,
    message: opts["--message"],
    reportSeq: seq,
    seq: (prev?.seq ?? 0) + (prev?.state === state ? 0 : 1),
  };
  return {};
}
