#!/usr/bin/env node
// A fake `herdr` 0.8.0 CLI for tests: same argv, same stdout/stderr envelopes and exit
// codes, with real panes provided by tmux on a private socket.
//
// Environment:
//   FAKE_HERDR_STATE_DIR    state.json, calls.jsonl, and the switches below (required)
//   FAKE_HERDR_TMUX_SOCKET  the private tmux socket backing the panes (required)
//   FAKE_HERDR_VERSION      what `herdr --version` reports (default 0.8.0)
// Switch files in the state dir:
//   down         every server command answers server_not_running
//   inject.json  {"command"?: "pane split", "code": "...", "message": "..."} answers that error,
//                or {"command"?, "stderr": "...", "exit": N} prints raw stderr (pre-0.8.0 style)
import fs from "node:fs";
import path from "node:path";
import { COMMANDS } from "./lib/commands.mjs";
import { ApiError, UsageError } from "./lib/errors.mjs";
import { agentLookup } from "./lib/agent.mjs";
import { loadState, prune, saveState, withLock } from "./lib/state.mjs";
import { tmuxClient } from "./lib/tmux.mjs";

const argv = process.argv.slice(2);
const stateDir = process.env.FAKE_HERDR_STATE_DIR;
const tmuxSocket = process.env.FAKE_HERDR_TMUX_SOCKET;

function main() {
  if (!stateDir || !tmuxSocket) {
    process.stderr.write("fake herdr: FAKE_HERDR_STATE_DIR and FAKE_HERDR_TMUX_SOCKET must be set\n");
    return 70;
  }
  record();

  const beforeDashes = argv.indexOf("--") === -1 ? argv : argv.slice(0, argv.indexOf("--"));
  if (beforeDashes.includes("-h") || beforeDashes.includes("--help")) {
    process.stdout.write("herdr (fake) — usage: herdr <workspace|tab|pane|agent> <command> [options]\n");
    return 0;
  }
  if (argv[0] === "--version" || argv[0] === "-V") {
    process.stdout.write(`herdr ${process.env.FAKE_HERDR_VERSION || "0.8.0"}\n`);
    return 0;
  }

  const key = `${argv[0] ?? ""} ${argv[1] ?? ""}`;
  const command = COMMANDS[key];
  if (!command) {
    process.stderr.write(`error: unknown command: ${argv.slice(0, 2).join(" ")}\n`);
    return 2;
  }

  const socketPath = path.join(stateDir, "herdr.sock");
  if (fs.existsSync(path.join(stateDir, "down"))) {
    const where = process.env.HERDR_SOCKET_PATH || socketPath;
    return fail(command.id, "server_not_running", `no herdr server is running at ${where}; run \`herdr\` to start or attach it`);
  }
  const injected = readInjected(key);
  if (injected) {
    if (injected.stderr !== undefined) {
      process.stderr.write(injected.stderr);
      return injected.exit ?? 1;
    }
    return fail(command.id, injected.code, injected.message ?? injected.code);
  }

  try {
    const outcome = withLock(stateDir, () => {
      const tmux = tmuxClient(tmuxSocket);
      const state = loadState(stateDir);
      prune(state, tmux.livePanes());
      const ctx = { state, tmux, env: process.env, stateDir, tmuxSocket, socketPath, agentOf: agentLookup(state, tmux) };
      try {
        return command.run(ctx, argv.slice(2));
      } finally {
        saveState(stateDir, state);
      }
    });
    if (outcome.rawError !== undefined) {
      process.stderr.write(outcome.rawError);
      return outcome.exit ?? 1;
    }
    if (outcome.json) process.stdout.write(`${JSON.stringify({ id: command.id, result: outcome.json })}\n`);
    if (outcome.text !== undefined) process.stdout.write(outcome.text);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n`);
      return 2;
    }
    if (e instanceof ApiError) return fail(command.id, e.code, e.message);
    return fail(command.id, "internal_error", e instanceof Error ? e.message : String(e));
  }
}

/** @param {string} id @param {string} code @param {string} message */
function fail(id, code, message) {
  process.stderr.write(`${JSON.stringify({ id, error: { code, message } })}\n`);
  return 1;
}

function record() {
  const line = {
    ts: new Date().toISOString(),
    argv,
    callerPaneId: process.env.HERDR_PANE_ID ?? null,
    callerWorkspaceId: process.env.HERDR_WORKSPACE_ID ?? null,
    socketPath: process.env.HERDR_SOCKET_PATH ?? null,
  };
  // One small O_APPEND write per call, so concurrent callers never interleave lines.
  fs.appendFileSync(path.join(/** @type {string} */ (stateDir), "calls.jsonl"), `${JSON.stringify(line)}\n`);
}

/** @param {string} key */
function readInjected(key) {
  let raw;
  try {
    raw = fs.readFileSync(path.join(/** @type {string} */ (stateDir), "inject.json"), "utf8");
  } catch {
    return undefined;
  }
  const inj = JSON.parse(raw);
  if (inj.command !== undefined && inj.command !== key) return undefined;
  return inj;
}

process.exitCode = main();
