// The fake's panes are real: each herdr pane is a tmux pane on a private server socket.
// Every call passes an argv array (no shell), and TMUX/TMUX_PANE are dropped so that a
// developer's own tmux session is never the target.
import { spawnSync } from "node:child_process";
import { ApiError } from "./errors.mjs";

/** @param {string} socket */
export function tmuxClient(socket) {
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;

  /** @param {string[]} args */
  function run(args) {
    const r = spawnSync("tmux", ["-S", socket, ...args], { encoding: "utf8", env });
    if (r.error) throw new ApiError("internal_error", `tmux could not run: ${r.error.message}`);
    return { ok: r.status === 0, stdout: r.stdout, stderr: r.stderr.trim() };
  }

  /** @param {string[]} args */
  function must(args) {
    const r = run(args);
    if (!r.ok) throw new ApiError("internal_error", `tmux ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  }

  return {
    run,
    must,
    /** All live tmux pane ids; none when the private server is not running. */
    livePanes() {
      const r = run(["list-panes", "-a", "-F", "#{pane_id}"]);
      if (!r.ok) {
        if (/no server running|error connecting to|No such file or directory/i.test(r.stderr)) return new Set();
        throw new ApiError("internal_error", `tmux list-panes failed: ${r.stderr}`);
      }
      return new Set(r.stdout.split("\n").filter(Boolean));
    },
  };
}

/** tmux expands formats in -c, so a literal `#` must be doubled. */
export function tmuxLiteralPath(/** @type {string} */ p) {
  return p.replaceAll("#", "##");
}

/**
 * The command a new pane runs: the user's shell, with TMUX removed so that programs in a
 * fake herdr pane see the environment of a real herdr pane.
 * @param {NodeJS.ProcessEnv} env
 */
export function paneShellArgv(env) {
  return ["env", "-u", "TMUX", "-u", "TMUX_PANE", env.SHELL || "/bin/sh"];
}

/** @param {Record<string, string>} vars */
export function envFlags(vars) {
  return Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
}

/** Keys accepted by `pane send-keys`, mapped to tmux key names. */
const NAMED_KEYS = new Map([
  ["enter", "Enter"],
  ["tab", "Tab"],
  ["esc", "Escape"],
  ["escape", "Escape"],
  ["backspace", "BSpace"],
  ["up", "Up"],
  ["down", "Down"],
  ["left", "Left"],
  ["right", "Right"],
  ["space", "Space"],
  ["minus", "-"],
  ["plus", "+"],
  ["backtick", "`"],
]);

/** @param {string} key @returns {string | undefined} a tmux key name, or undefined when invalid */
export function tmuxKey(key) {
  const lower = key.toLowerCase();
  if (NAMED_KEYS.has(lower)) return NAMED_KEYS.get(lower);
  if (/^f([1-9]|1[0-2])$/.test(lower)) return lower.toUpperCase();
  if (/^[CM]-.$/.test(key)) return key;
  const chord = /^(ctrl|alt|shift)\+(.+)$/.exec(lower);
  if (chord) {
    const inner = tmuxKey(chord[2]);
    if (inner === undefined) return undefined;
    if (chord[1] === "shift" && inner === "Tab") return "BTab";
    return `${chord[1] === "ctrl" ? "C" : chord[1] === "alt" ? "M" : "S"}-${inner}`;
  }
  if ([...key].length === 1) return key;
  return undefined;
}
