// The server's lifetime: `herdr server` in the foreground, `herdr server stop`, and the unguarded
// `herdr status server --json` probe. A fake server that was never started with `herdr server` (no
// pid in server.json) stands for one the user runs; it is up until a test sets `down`.
//
// herdr 0.9.3 and older stop on SIGHUP as on SIGINT/SIGTERM and end every pane (the `ctrlc` crate's
// `termination` feature, #2957); 0.9.4 keeps running when the launching terminal closes (#4920).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tmuxClient } from "./tmux.mjs";
import { atLeast, clientVersion, protocolOf, serverInfo, since } from "./versions.mjs";

/** @param {string} stateDir */
function isDown(stateDir) {
  return fs.existsSync(path.join(stateDir, "down"));
}

/** herdr's `detached_server_daemon` capability is `getsid(0) == getpid()`. @param {number} pid */
function sessionLeader(pid) {
  const r = spawnSync("ps", ["-o", "sid=", "-p", String(pid)], { encoding: "utf8" });
  return r.status === 0 && Number(r.stdout.trim()) === pid;
}

/** @param {string} stateDir @param {string} tmuxSocket */
function stop(stateDir, tmuxSocket) {
  try {
    fs.writeFileSync(path.join(stateDir, "down"), "");
    fs.rmSync(path.join(stateDir, "server.json"), { force: true });
  } catch {
    /* the test removed the state dir already */
  }
  // Stopping the server ends every pane process.
  tmuxClient(tmuxSocket).run(["kill-server"]);
}

/** `herdr server`: runs until a signal stops it. @param {string} stateDir @param {string} tmuxSocket */
export function runServer(stateDir, tmuxSocket) {
  if (!isDown(stateDir)) {
    process.stderr.write(`error: a herdr server is already running at ${path.join(stateDir, "herdr.sock")}\n`);
    return 1;
  }
  const version = clientVersion();
  fs.writeFileSync(path.join(stateDir, "server.json"), JSON.stringify({ version, pid: process.pid }));
  fs.rmSync(path.join(stateDir, "down"), { force: true });
  const keepAlive = setInterval(() => undefined, 60_000);
  const quit = () => {
    clearInterval(keepAlive);
    stop(stateDir, tmuxSocket);
    process.exit(0);
  };
  process.on("SIGTERM", quit);
  process.on("SIGINT", quit);
  process.on("SIGHUP", () => {
    if (!atLeast(version, since.survivesSighup)) quit();
  });
  return undefined;
}

/** `herdr server stop`. @param {string} stateDir @param {string} tmuxSocket */
export function serverStop(stateDir, tmuxSocket) {
  if (isDown(stateDir)) {
    process.stderr.write(`${JSON.stringify({ id: "cli:server:stop", error: { code: "server_not_running", message: "no herdr server is running" } })}\n`);
    return 1;
  }
  const { pid } = serverInfo(stateDir);
  if (pid) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      /* gone already */
    }
  } else stop(stateDir, tmuxSocket);
  process.stdout.write(`${JSON.stringify({ id: "cli:server:stop", result: { type: "ok" } })}\n`);
  return 0;
}

/**
 * `herdr status server --json`: one compact line, exit 0 whether a server runs or not; version,
 * protocol, capabilities and compatible are null when none runs (`v0.7.5:src/cli/status.rs`).
 * @param {string[]} args @param {string} stateDir @param {string} socket
 */
export function statusServer(args, stateDir, socket) {
  if (args.length > 1 || (args.length === 1 && args[0] !== "--json")) {
    process.stderr.write("usage: herdr status server [--json]\n");
    return 2;
  }
  const client = protocolOf(clientVersion());
  /** @type {Record<string, unknown>} */
  let out;
  if (isDown(stateDir)) {
    out = {
      status: "not_running",
      running: false,
      version: null,
      protocol: null,
      capabilities: null,
      compatible: null,
      socket,
      session: null,
      restart_needed: false,
    };
  } else {
    const info = serverInfo(stateDir);
    const protocol = protocolOf(info.version);
    /** @type {Record<string, unknown>} */
    const capabilities = { live_handoff: true, detached_server_daemon: info.pid ? sessionLeader(info.pid) : true };
    // 0.9.x adds optional capability keys (herdr-09 §4.1); clients must ignore what they do not know.
    if (protocol >= 22) Object.assign(capabilities, { endpoint_protocol_generation: 1, surface_interest: true, health_check: true });
    out = {
      status: "running",
      running: true,
      version: info.version,
      protocol,
      capabilities,
      compatible: protocol === client,
      socket,
      session: null,
      restart_needed: info.version !== clientVersion(),
    };
  }
  if (args[0] === "--json") process.stdout.write(`${JSON.stringify(out)}\n`);
  else process.stdout.write(`status: ${out.status === "running" ? "running" : "not running"}\nsocket: ${socket}\n`);
  return 0;
}
