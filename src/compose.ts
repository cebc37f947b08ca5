/**
 * The composition root: settings -> runtime -> sheep host -> core. The only place that knows
 * every piece; extensions/shepherd.ts calls it and stays thin.
 */
import { execa } from "execa";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ShepherdError } from "./core/errors.js";
import { newId } from "./core/ids.js";
import { Shepherd } from "./core/shepherd.js";
import { defaultPiCommand } from "./launch/pi-command.js";
import type { Runtime, RuntimeName } from "./ports/runtime.js";
import { FileSheepHost } from "./protocol/file-host.js";
import { GitWorkspace } from "./git/workspace.js";
import { stateDir, worktreesDir } from "./protocol/layout.js";
import { pidAlive } from "./protocol/pid.js";
import { FileStateStore } from "./protocol/state-store.js";
import { chooseRuntime } from "./runtimes/choose.js";
import { HerdrRuntime, herdrServerAnswers } from "./runtimes/herdr/index.js";
import { TmuxRuntime } from "./runtimes/tmux/runtime.js";
import { loadSettings, type LoadedSettings } from "./settings.js";

export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export function agentDirOf(env: NodeJS.ProcessEnv): string {
  const dir = env.PI_CODING_AGENT_DIR;
  if (dir) return resolve(dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir);
  return join(homedir(), ".pi", "agent");
}

export interface ShepherdApp {
  shepherd: Shepherd;
  loaded: LoadedSettings;
  agentDir: string;
  bundledDir: string;
  runtime: RuntimeName;
}

export interface ComposeOptions {
  env?: NodeJS.ProcessEnv;
  cwd: string;
  /** The pi running this shepherd, as argv; found from process.argv when not given. */
  piCommand?: string[];
  extraPiArgs?: string[];
  /** What pi says of the project (ctx.isProjectTrusted); false keeps its settings file out. */
  projectTrusted?: boolean;
  /** Where problems found later (the state file failing to write) are told to the person. */
  onWarning?: (message: string) => void;
}

/**
 * Who owns the panes this process creates. The token lives on globalThis so that /reload, which
 * re-imports this module in the same process, keeps the same owner and re-attaches its sheep.
 */
const TOKEN_KEY = Symbol.for("pi-shepherd.owner-token");
function ownerToken(): string {
  const g = globalThis as unknown as Record<symbol, string | undefined>;
  g[TOKEN_KEY] ??= newId("agent").slice(2);
  return g[TOKEN_KEY];
}

export function processOwner(): string {
  return `${process.pid}:${ownerToken()}`;
}

/** An owner is alive while its process runs; in this process, only our own token is. */
export function ownerAlive(owner: string): boolean {
  const [pidText, token] = owner.split(":");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return token === ownerToken();
  return pidAlive(pid);
}

/** The sheep host with this package's launcher and sheep extension, run by the shepherd's node. */
export function sheepHost(o: { agentDir: string; piCommand: readonly string[]; env: NodeJS.ProcessEnv; depth: number; extraPiArgs?: readonly string[] }) {
  return new FileSheepHost({
    ...o,
    nodePath: process.execPath,
    launcherPath: join(packageRoot, "src", "launch", "launcher.mjs"),
    sheepExtension: join(packageRoot, "extensions", "sheep.ts"),
  });
}

async function tmuxInstalled(env: NodeJS.ProcessEnv): Promise<boolean> {
  const r = await execa("tmux", ["-V"], { reject: false, env, stdin: "ignore" });
  return r.exitCode === 0;
}

export async function composeShepherd(o: ComposeOptions): Promise<ShepherdApp> {
  const env = o.env ?? process.env;
  const agentDir = agentDirOf(env);
  const loaded = await loadSettings(agentDir, o.cwd, o.projectTrusted === undefined ? {} : { projectTrusted: o.projectTrusted });
  const { settings } = loaded;
  const runtimeName = await chooseRuntime({
    setting: settings.runtime,
    env,
    probes: { herdrServerAnswers: () => herdrServerAnswers({ env }), tmuxInstalled: () => tmuxInstalled(env) },
  });
  const runtime: Runtime =
    runtimeName === "herdr"
      ? new HerdrRuntime({ env })
      : new TmuxRuntime({ env, ...(env.PI_SHEPHERD_TMUX_SOCKET ? { socket: env.PI_SHEPHERD_TMUX_SOCKET } : {}) });
  const piCommand = settings.piCommand ?? o.piCommand ?? defaultPiCommand();
  if (!piCommand) {
    throw new ShepherdError("runtime_unavailable", 'cannot tell which pi runs this shepherd; set "piCommand" (e.g. ["pi"]) in the shepherd settings.');
  }
  const depth = Number(env.PI_SHEPHERD_DEPTH ?? "0") || 0;
  const host = sheepHost({ agentDir, piCommand, env, depth: depth + 1, ...(o.extraPiArgs ? { extraPiArgs: o.extraPiArgs } : {}) });
  const shepherd = new Shepherd({
    runtime,
    host,
    owner: processOwner(),
    store: new FileStateStore(stateDir(agentDir), o.onWarning ? { onWarning: o.onWarning } : {}),
    ownerAlive,
    startTimeoutMs: settings.startTimeout * 1000,
    defaultWaitTimeoutSec: settings.waitTimeout,
    workspace: new GitWorkspace({ env, worktreesDir: worktreesDir(agentDir) }),
    evidence: settings.evidence,
    evidenceInlineLines: settings.diffInlineLines,
  });
  return { shepherd, loaded, agentDir, bundledDir: join(packageRoot, "agents"), runtime: runtimeName };
}
