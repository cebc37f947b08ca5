// The fake "server" state lives in a JSON file so that separate CLI invocations share it.
// Every invocation holds a directory lock for its whole run, so concurrent calls from
// parallel tests or sheep never interleave id allocation with tmux pane creation.
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";

const LOCK_STALE_MS = 30_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Whether the process that took the lock still runs. A herdr CLI inside a sheep's pane dies with
 * the pane (SIGHUP) while it may hold the lock; herdr's own server never waits on a client gone,
 * so neither may the fake: a dead or zombie holder's lock is free at once.
 * @param {string} lock
 */
function holderGone(lock) {
  let pid;
  try {
    pid = Number(fs.readFileSync(path.join(lock, "pid"), "utf8"));
  } catch {
    return false;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === "ESRCH";
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

/** @param {string} dir @param {() => T} fn @returns {T} @template T */
export function withLock(dir, fn) {
  const lock = path.join(dir, "state.lock");
  for (;;) {
    // The lock is a directory named with its holder's pid inside, renamed into place whole, so
    // no one ever sees a lock without its holder.
    const taking = fs.mkdtempSync(path.join(dir, "state.lock-"));
    fs.writeFileSync(path.join(taking, "pid"), String(process.pid));
    try {
      fs.renameSync(taking, lock);
      break;
    } catch (e) {
      fs.rmSync(taking, { recursive: true, force: true });
      const code = /** @type {NodeJS.ErrnoException} */ (e).code;
      if (code !== "EEXIST" && code !== "ENOTEMPTY") throw e;
      // A holder that crashed leaves the lock behind; herdr itself never blocks forever.
      try {
        if (holderGone(lock) || Date.now() - fs.statSync(lock).mtimeMs > LOCK_STALE_MS) fs.rmSync(lock, { recursive: true, force: true });
      } catch {
        /* the holder released it meanwhile */
      }
      Atomics.wait(sleeper, 0, 0, 5);
    }
  }
  try {
    return fn();
  } finally {
    release(lock);
  }
}

/**
 * Moved away whole before it is emptied: an empty lock directory would let a waiter's rename
 * replace it, and this rmdir then fail (ENOTEMPTY) or remove the waiter's lock.
 * @param {string} lock
 */
function release(lock) {
  const released = `${lock}-released-${randomBytes(6).toString("hex")}`;
  try {
    fs.renameSync(lock, released);
  } catch (e) {
    // Taken as stale by a waiter (held past LOCK_STALE_MS): nothing of ours is left to remove.
    if (/** @type {NodeJS.ErrnoException} */ (e).code === "ENOENT") return;
    throw e;
  }
  fs.rmSync(released, { recursive: true, force: true });
}

export function emptyState() {
  return {
    nextWorkspace: 1,
    /** @type {Record<string, any>} */ workspaces: {},
    /** @type {Record<string, any>} */ tabs: {},
    /** @type {Record<string, any>} */ panes: {},
    /** @type {string | null} */ focusedPane: null,
  };
}

/** @param {string} dir */
export function loadState(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "state.json"), "utf8"));
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code === "ENOENT") return emptyState();
    throw e;
  }
}

/** @param {string} dir @param {object} state */
export function saveState(dir, state) {
  const file = path.join(dir, "state.json");
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(state, null, 1));
  fs.renameSync(tmp, file);
}

// herdr's public numbers use a bijective base-32 alphabet: w9, wA … w0, then w11.
const ALPHABET = "123456789ABCDEFGHJKMNPQRSTVWXYZ0";

/** @param {number} n a positive integer */
export function encodePublicNumber(n) {
  let out = "";
  while (n > 0) {
    n -= 1;
    out = ALPHABET[n % 32] + out;
    n = Math.floor(n / 32);
  }
  return out;
}

export function newTerminalId() {
  return `term_${randomBytes(8).toString("hex")}`;
}

/** Allocates the next workspace id; ids are never reused within one fake server. */
export function allocWorkspace(/** @type {ReturnType<typeof emptyState>} */ state) {
  const number = state.nextWorkspace++;
  return { id: `w${encodePublicNumber(number)}`, number };
}

/** @param {{ id: string, nextTab: number }} ws */
export function allocTab(ws) {
  const number = ws.nextTab++;
  return { id: `${ws.id}:t${encodePublicNumber(number)}`, number };
}

/** @param {{ id: string, nextPane: number }} ws */
export function allocPane(ws) {
  return `${ws.id}:p${encodePublicNumber(ws.nextPane++)}`;
}

/**
 * Drops panes whose tmux pane has disappeared (the shell exited or a test killed it),
 * then empty tabs and workspaces, as herdr does when a pane's process exits.
 * @param {ReturnType<typeof emptyState>} state
 * @param {Set<string>} liveTmuxPanes
 */
export function prune(state, liveTmuxPanes) {
  for (const [id, pane] of Object.entries(state.panes)) {
    if (!liveTmuxPanes.has(pane.tmux)) removePane(state, id);
  }
}

/** Removes a pane; its tab goes with the last pane, its workspace with the last tab. */
export function removePane(/** @type {ReturnType<typeof emptyState>} */ state, /** @type {string} */ id) {
  const pane = state.panes[id];
  if (!pane) return;
  delete state.panes[id];
  if (state.focusedPane === id) state.focusedPane = null;
  const tab = state.tabs[pane.tabId];
  if (!tab) return;
  tab.panes = tab.panes.filter((/** @type {string} */ p) => p !== id);
  if (tab.panes.length === 0) removeTab(state, tab.id);
}

export function removeTab(/** @type {ReturnType<typeof emptyState>} */ state, /** @type {string} */ id) {
  const tab = state.tabs[id];
  if (!tab) return;
  for (const p of tab.panes) {
    delete state.panes[p];
    if (state.focusedPane === p) state.focusedPane = null;
  }
  delete state.tabs[id];
  const ws = state.workspaces[tab.workspaceId];
  if (!ws) return;
  ws.tabs = ws.tabs.filter((/** @type {string} */ t) => t !== id);
  if (ws.tabs.length === 0) delete state.workspaces[ws.id];
}

export function removeWorkspace(/** @type {ReturnType<typeof emptyState>} */ state, /** @type {string} */ id) {
  const ws = state.workspaces[id];
  if (!ws) return;
  for (const t of [...ws.tabs]) removeTab(state, t);
  delete state.workspaces[id];
}
