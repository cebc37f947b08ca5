// Saved SSH machines (0.9.0) and the `--machine` prefix (0.9.1), herdr-09.md §3. Profiles live in
// endpoints.json beside the fake's state (herdr keeps them in its client state file). A machine's
// "remote server" is another fake server: its own state dir and tmux socket under machines/<id>/, so
// its ids (`w1:p1`, …) are unrelated to Local's. No SSH is involved.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { atLeast, clientVersion, since } from "./versions.mjs";

/** @typedef {{ id: string, label: string, target: string, session: string, enabled: boolean, windows_desktop: boolean }} Profile */

/** @param {string} stateDir @returns {{ profiles: Profile[], selected_profile: string | null }} */
function load(stateDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, "endpoints.json"), "utf8"));
  } catch {
    return { profiles: [], selected_profile: null };
  }
}

/** @param {string} stateDir @param {ReturnType<typeof load>} data */
function save(stateDir, data) {
  fs.writeFileSync(path.join(stateDir, "endpoints.json"), JSON.stringify(data, null, 2));
}

/** @param {string} text */
function usage(text) {
  process.stderr.write(`error: ${text}\n`);
  return 2;
}

/** The directory that stands for a machine's remote server. @param {string} stateDir @param {string} id */
export function machineDir(stateDir, id) {
  return path.join(stateDir, "machines", id);
}

/** Commands `--machine` forwards (index `src/cli/target.rs`); anything else is refused with exit 2. */
function forwarded(/** @type {string[]} */ args) {
  const [cmd, sub] = args;
  if (["workspace", "worktree", "tab", "pane", "notification", "agent"].includes(cmd ?? "")) return true;
  if (cmd === "api") return sub === "snapshot";
  if (cmd === "status") return sub === "server";
  if (cmd === "plugin") return ["link", "unlink", "enable", "disable", "list", "action", "log", "logs", "pane"].includes(sub ?? "");
  if (cmd === "server") return ["stop", "reload-config", "agent-manifests", "reload-agent-manifests"].includes(sub ?? "");
  return false;
}

const LAUNCH_OPTIONS = ["--session", "--remote", "--remote-keybindings"];

/**
 * Resolves a leading `--machine X` / `--machine=X`: the argv left to run and the server it runs on.
 * @param {string[]} argv @param {string} stateDir @param {string} tmuxSocket
 * @returns {{ exit?: number, argv: string[], stateDir: string, tmuxSocket: string, env: NodeJS.ProcessEnv }}
 */
export function withMachine(argv, stateDir, tmuxSocket) {
  const local = { argv, stateDir, tmuxSocket, env: process.env };
  const first = argv[0] ?? "";
  if (first !== "--machine" && !first.startsWith("--machine=")) {
    if (LAUNCH_OPTIONS.some((o) => argv.includes(o)) && argv.some((a) => a === "--machine" || a.startsWith("--machine="))) {
      return { ...local, exit: usage("--machine cannot be combined with --session, --remote or --remote-keybindings") };
    }
    return local;
  }
  if (!atLeast(clientVersion(), since.machineFlag)) return { ...local, exit: usage(`unknown option: ${first.split("=")[0]}`) };
  const value = first === "--machine" ? argv[1] : first.slice("--machine=".length);
  const rest = first === "--machine" ? argv.slice(2) : argv.slice(1);
  if (value === undefined || value === "" || value.startsWith("-")) return { ...local, exit: usage("--machine needs a saved machine's label or id") };
  if (rest.some((a) => a === "--machine" || a.startsWith("--machine="))) return { ...local, exit: usage("--machine may be given only once") };
  if (LAUNCH_OPTIONS.some((o) => rest.includes(o))) {
    return { ...local, exit: usage("--machine cannot be combined with --session, --remote or --remote-keybindings") };
  }
  const { profiles } = load(stateDir);
  const byId = profiles.find((p) => p.id === value);
  const byLabel = profiles.filter((p) => p.label === value);
  if (!byId && byLabel.length > 1) return { ...local, exit: usage(`machine label '${value}' is ambiguous; use its id`) };
  const profile = byId ?? byLabel[0];
  if (!profile) return { ...local, exit: usage(`no saved machine matches '${value}'`) };
  if (!profile.enabled) return { ...local, exit: usage(`machine '${profile.label}' is disabled`) };
  if (!forwarded(rest)) {
    return { ...local, exit: usage(`\`${rest.slice(0, 2).join(" ")}\` is not an API-backed machine command; run it on the machine itself`) };
  }
  const dir = machineDir(stateDir, profile.id);
  fs.mkdirSync(path.join(dir, "state"), { recursive: true });
  // HERDR_PANE_ID is ignored under --machine: caller-relative defaults do not apply remotely.
  const env = { ...process.env };
  delete env.HERDR_PANE_ID;
  return { argv: rest, stateDir: path.join(dir, "state"), tmuxSocket: path.join(dir, "tmux.sock"), env };
}

/** `herdr machine list|add|rename|remove|enable|disable`. @param {string[]} args @param {string} stateDir */
export function machineCommand(args, stateDir) {
  if (!atLeast(clientVersion(), since.machines)) return usage("unknown command: machine");
  const [sub, ...rest] = args;
  const data = load(stateDir);
  const flag = (/** @type {string} */ name) => {
    const i = rest.findIndex((a) => a === name || a.startsWith(`${name}=`));
    if (i === -1) return undefined;
    const a = /** @type {string} */ (rest[i]);
    const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : rest[i + 1];
    rest.splice(i, a.includes("=") ? 1 : 2);
    return v;
  };
  if (sub === "list") {
    if (rest.length > 1 || (rest.length === 1 && rest[0] !== "--json")) return usage("usage: herdr machine list [--json]");
    if (rest[0] === "--json") {
      const out = data.profiles.map((p) => {
        /** @type {Record<string, unknown>} */
        const row = { id: p.id, label: p.label, target: p.target, session: p.session, enabled: p.enabled, selected: data.selected_profile === p.id };
        // 0.9.1 printed the same without windows_desktop [3p].
        if (atLeast(clientVersion(), "0.9.2")) row.windows_desktop = p.windows_desktop;
        return row;
      });
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else if (data.profiles.length === 0) process.stdout.write("No saved SSH machines.\n");
    else {
      for (const p of data.profiles) process.stdout.write(`${p.id}\t${p.label}\t${p.target}\t${p.session}\t${p.enabled ? "enabled" : "disabled"}\n`);
    }
    return 0;
  }
  if (sub === "add") {
    const label = flag("--label");
    const session = flag("--remote-session") ?? "default";
    const desktop = rest.includes("--remote-desktop");
    const positional = rest.filter((a) => a !== "--remote-desktop");
    if (!label || positional.length !== 1 || positional[0]?.startsWith("-"))
      return usage("usage: herdr machine add <ssh-target> --label LABEL [--remote-session NAME] [--remote-desktop]");
    // Not idempotent: a second add with the same label saves a duplicate (0.9.1 [3p]).
    const id = randomBytes(16).toString("hex");
    data.profiles.push({ id, label, target: /** @type {string} */ (positional[0]), session, enabled: true, windows_desktop: desktop });
    save(stateDir, data);
    fs.mkdirSync(path.join(machineDir(stateDir, id), "state"), { recursive: true });
    process.stdout.write(`Saved SSH machine ${id}. Remote server is ready.\nUse it with: herdr --machine ${label} <command>\n`);
    return 0;
  }
  if (["rename", "remove", "enable", "disable"].includes(sub ?? "")) {
    const label = sub === "rename" ? flag("--label") : undefined;
    if (rest.length !== 1 || (sub === "rename" && !label)) return usage(`usage: herdr machine ${sub} <id>${sub === "rename" ? " --label LABEL" : ""}`);
    // Profile ids only: a label is not found.
    const i = data.profiles.findIndex((p) => p.id === rest[0]);
    if (i === -1) {
      process.stderr.write(`error: machine profile ${rest[0]} was not found\n`);
      return 1;
    }
    const p = /** @type {Profile} */ (data.profiles[i]);
    if (sub === "rename") p.label = /** @type {string} */ (label);
    else if (sub === "remove") data.profiles.splice(i, 1);
    else p.enabled = sub === "enable";
    save(stateDir, data);
    process.stdout.write(`${sub === "remove" ? "Removed" : sub === "rename" ? "Renamed" : sub === "enable" ? "Enabled" : "Disabled"} SSH machine ${p.id}.\n`);
    return 0;
  }
  return usage("usage: herdr machine <list|add|rename|remove|enable|disable>");
}
