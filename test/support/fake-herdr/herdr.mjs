#!/usr/bin/env node
// A fake `herdr` CLI for tests, emulating 0.7.5/0.8.0, 0.8.2 and 0.9.x (lib/versions.mjs says
// what differs): same argv, same stdout/stderr envelopes and exit codes, with real panes provided
// by tmux on a private socket.
//
// Environment:
//   FAKE_HERDR_STATE_DIR    state.json, calls.jsonl, and the switches below (required)
//   FAKE_HERDR_TMUX_SOCKET  the private tmux socket backing the panes (required)
//   FAKE_HERDR_VERSION      the version of this binary, `herdr --version` (default 0.8.0)
// Files in the state dir:
//   down         no server runs: every server command answers server_not_running
//   server.json  {"version", "pid"?}: the running server's version (default: the client's) and,
//                for one started with `herdr server`, its process
//   inject.json  {"command"?: "pane split", "code": "...", "message": "..."} answers that error,
//                or {"command"?, "stderr": "...", "exit": N} prints raw stderr (pre-0.8.0 style)
import fs from "node:fs";
import path from "node:path";
import { COMMANDS } from "./lib/commands.mjs";
import { ApiError, UsageError } from "./lib/errors.mjs";
import { agentLookup } from "./lib/agent.mjs";
import { loadState, prune, saveState, withLock } from "./lib/state.mjs";
import { tmuxClient } from "./lib/tmux.mjs";
import { runServer, serverStop, statusServer } from "./lib/server.mjs";
import { clientVersion, mismatchMessage, protocolOf, serverInfo } from "./lib/versions.mjs";
import { machineCommand, withMachine } from "./lib/machine.mjs";

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
    process.stdout.write(`herdr ${clientVersion()}\n`);
    return 0;
  }
  // `--machine` picks another server (another state dir) and leaves the rest of argv to run there.
  const target = withMachine(argv, stateDir, tmuxSocket);
  if (target.exit !== undefined) return target.exit;
  return runCommand(target.argv, target.stateDir, target.tmuxSocket, target.env);
}

/**
 * @param {string[]} args @param {string} stateDir @param {string} tmuxSocket @param {NodeJS.ProcessEnv} env
 */
function runCommand(args, stateDir, tmuxSocket, env) {
  const socketPath = path.join(stateDir, "herdr.sock");
  if (args[0] === "server" && args.length === 1) return runServer(stateDir, tmuxSocket);
  if (args[0] === "machine") return machineCommand(args.slice(1), stateDir);

  const key = `${args[0] ?? ""} ${args[1] ?? ""}`;
  const injectedFirst = key === "status server" ? readInjected(key) : undefined;
  if (injectedFirst) return answerInjected(injectedFirst, "cli:status:server");
  // `status server --json` pings without the protocol guard (v0.8.2:src/cli/status.rs).
  if (key === "status server") return statusServer(args.slice(2), stateDir, env.HERDR_SOCKET_PATH || socketPath);
  if (key === "server stop") return serverStop(stateDir, tmuxSocket);

  const command = COMMANDS[key];
  if (!command) {
    process.stderr.write(`error: unknown command: ${args.slice(0, 2).join(" ")}\n`);
    return 2;
  }

  if (fs.existsSync(path.join(stateDir, "down"))) {
    const where = env.HERDR_SOCKET_PATH || socketPath;
    return fail(command.id, "server_not_running", `no herdr server is running at ${where}; run \`herdr\` to start or attach it`);
  }
  // The CLI pings before every socket command and refuses any other protocol than its own.
  const client = protocolOf(clientVersion());
  const server = protocolOf(serverInfo(stateDir).version);
  if (client !== server) return fail(command.id, "protocol_mismatch", mismatchMessage(client, server));
  const injected = readInjected(key);
  if (injected) return answerInjected(injected, command.id);

  try {
    const outcome = withLock(stateDir, () => {
      const tmux = tmuxClient(tmuxSocket);
      const state = loadState(stateDir);
      prune(state, tmux.livePanes());
      const ctx = { state, tmux, env, stateDir, tmuxSocket, socketPath, version: serverInfo(stateDir).version, agentOf: agentLookup(state, tmux) };
      try {
        return command.run(ctx, args.slice(2));
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

/** @param {any} injected @param {string} id */
function answerInjected(injected, id) {
  if (injected.stderr !== undefined) {
    process.stderr.write(injected.stderr);
    return injected.exit ?? 1;
  }
  return fail(id, injected.code, injected.message ?? injected.code);
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
