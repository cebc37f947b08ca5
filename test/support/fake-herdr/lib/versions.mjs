// Which herdr the fake is, and what differs between the versions it emulates (herdr-contract.md
// §1.5, herdr-09.md §1 and §1.1). The client's version comes from FAKE_HERDR_VERSION (the binary),
// the server's from server.json in the state dir (the binary that started it); without that file
// the server is the same version as the client.
import fs from "node:fs";
import path from "node:path";

export const DEFAULT_VERSION = "0.8.0";

/** @param {string} text @returns {[number, number, number]} */
export function parts(text) {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
}

/** @param {string} a @param {string} b */
export function atLeast(a, b) {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return true;
}

/**
 * PROTOCOL_VERSION of each release. 0.9.2, 0.9.4 and 0.9.5 are unconfirmed (herdr-09 §1): the fake
 * takes the safe reading that every 0.9.x (and anything newer) speaks 22 as 0.9.0, 0.9.1 and 0.9.3 do.
 * @param {string} version
 */
export function protocolOf(version) {
  if (atLeast(version, "0.9.0")) return 22;
  if (atLeast(version, "0.8.1")) return 20;
  if (atLeast(version, "0.8.0")) return 19;
  if (atLeast(version, "0.7.5")) return 17;
  if (atLeast(version, "0.7.2")) return 16;
  return 14;
}

export function clientVersion() {
  return process.env.FAKE_HERDR_VERSION || DEFAULT_VERSION;
}

/** @param {string} stateDir @returns {{ version: string, pid?: number }} */
export function serverInfo(stateDir) {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(stateDir, "server.json"), "utf8"));
    if (typeof v.version === "string") return v;
  } catch {
    /* no server.json: the server is the client's own version */
  }
  return { version: clientVersion() };
}

/** What changed when, as the commands need it. */
export const since = {
  /** `agent prompt` refuses a blocked agent; `agent start` waits out start-up (0.8.1). */
  agentBlocked: "0.8.1",
  /** HERDR_BIN_PATH in every pane shell (0.8.1). */
  binPathInPanes: "0.8.1",
  /** `recent` reads no longer come back empty while output fits the viewport (#3444, fixed in 0.9.0). */
  recentReadsFixed: "0.9.0",
  /** `herdr machine …` (0.9.0) and `herdr --machine` (0.9.1). */
  machines: "0.9.0",
  machineFlag: "0.9.1",
  /** A SIGHUP no longer stops the server (0.9.4, #4920). */
  survivesSighup: "0.9.4",
};

/**
 * The CLI's exact-protocol guard (`v0.8.2:src/cli/protocol_guard.rs`): any difference fails, in
 * both directions, with one of the two messages.
 * @param {number} client @param {number} server
 */
export function mismatchMessage(client, server) {
  return client > server
    ? `client protocol ${client} is newer than server protocol ${server}; restart the Herdr server before using this command. Run \`herdr server stop\` and start herdr again`
    : `client protocol ${client} is older than server protocol ${server}; upgrade the Herdr client before using this command`;
}
