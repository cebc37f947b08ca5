/**
 * What `init` makes of its parameters: the very adapters a local shepherd runs (LocalSheepFiles,
 * the tmux or herdr runtime, GitWorkspace), here on the remote host. The sheep side they launch
 * is the bundle beside this file, never anything of the remote user's.
 */
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { lstat, mkdir } from "node:fs/promises";
import { homedir, tmpdir, userInfo } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { ShepherdError } from "../../domain/errors.ts";
import { GitWorkspace } from "../../git/workspace.ts";
import type { Runtime } from "../../ports/runtime.ts";
import type { Workspace } from "../../ports/workspace.ts";
import { LocalSheepFiles } from "../../protocol/local-sheep-files.ts";
import { ensurePrivateDir } from "../../protocol/files.ts";
import { stateDir as defaultStateDir, worktreesDir } from "../../protocol/layout.ts";
import { chooseRuntime } from "../../runtimes/choose.ts";
import { herdrServerAnswers } from "../../runtimes/herdr/index.ts";
import { makeRuntime } from "../../runtimes/make.ts";
import { tmuxVersion } from "../../runtimes/tmux/tmux-cli.ts";
import { SheepEgress } from "../../sandbox/egress/sheep-egress.ts";
import { jitiSeedMaker } from "../../sandbox/jiti-seed.ts";
import type { SandboxConfig } from "../../sandbox/launch.ts";
import { bwrapProbe, checkBwrap } from "../../sandbox/probe.ts";
import { DEFAULT_SANDBOX, sandboxProblem, type SandboxSettings } from "../../sandbox/settings.ts";
import type { InitAnswer, InitParams } from "../rpc/call.ts";
import type { AuditInput } from "../../ports/audit.ts";
import type { EgressRefusalEvent } from "../rpc/egress-event.ts";

export interface Hosted {
  runtime: Runtime;
  host: LocalSheepFiles;
  workspace: Workspace;
  init: InitParams;
  answer: InitAnswer;
  /** This host's egress proxy for its sandboxed sheep: closed when the agent ends (the next agent serves them again). */
  egress: SheepEgress;
}

/** The files of the bundle a sheep needs, beside the agent's own. */
export interface SheepSide {
  launcher: string;
  reportExit: string;
  sheepExtension: string;
}

export function sheepSideIn(dir: string): SheepSide {
  return { launcher: join(dir, "launcher.mjs"), reportExit: join(dir, "report-exit.sh"), sheepExtension: join(dir, "sheep.mjs") };
}

/**
 * The agent's own variables without those that would put it inside the remote user's multiplexer
 * or make it a sheep (PI_SHEPHERD_HERDR_BIN, the person's herdr there, stays).
 */
export function ownEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(base).filter(
      ([k]) => !/^(TMUX|TMUX_PANE|HERDR_ENV|HERDR_PANE_ID|HERDR_TAB_ID|HERDR_WORKSPACE_ID|PI_SHEPHERD_(RUNTIME|TMUX_SOCKET|DEPTH|SHEEP_DIR|AGENT_ID))$/.test(k),
    ),
  );
}

/** Unix socket paths hold about 104 bytes: a deep state dir gets a short private directory of ours instead. */
const SOCKET_PATH_MAX = 100;

export async function privateTmuxSocket(state: string): Promise<string> {
  const inState = join(state, "tmux", "default");
  if (Buffer.byteLength(inState) <= SOCKET_PATH_MAX) {
    await ensurePrivateDir(join(state, "tmux"));
    return inState;
  }
  const dir = join(tmpdir(), `pi-shepherd-${userInfo().uid}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== userInfo().uid || (st.mode & 0o077) !== 0) {
    throw new ShepherdError("runtime_unavailable", `${dir} is not a private directory of this user; remove it, or use a shorter agentDir.`);
  }
  return join(dir, createHash("sha256").update(state).digest("hex").slice(0, 16));
}

/**
 * A bare command word (the default `pi`) found on the sheep's PATH whose real file is pi's own
 * script: run as `<this node> <that script>`, so the launcher runs pi in its own process, one
 * process per sheep as locally. Anything else (a wrapper, an absolute argv) is used as given.
 */
export function inProcessPi(piCommand: readonly string[], env: NodeJS.ProcessEnv, node = process.execPath): string[] {
  const [word] = piCommand;
  if (piCommand.length !== 1 || !word || word.includes("/")) return [...piCommand];
  for (const dir of (env.PATH ?? "").split(":")) {
    if (!isAbsolute(dir)) continue;
    try {
      const path = join(dir, word);
      accessSync(path, constants.X_OK);
      const real = realpathSync(path);
      if (!statSync(real).isFile()) continue;
      return /[\\/]pi-coding-agent[\\/].*\.m?js$/.test(real) ? [node, real] : [...piCommand];
    } catch {
      // not here
    }
  }
  return [...piCommand];
}

/** `refused`: where this host's egress refusals go (pushed to the shepherd, for its audit log). */
export async function setUp(init: InitParams, side: SheepSide, refused?: (e: EgressRefusalEvent) => void): Promise<Hosted> {
  for (const f of Object.values(side)) {
    if (!existsSync(f)) throw new ShepherdError("start_failed", `the agent's bundle lacks ${f}; deploy it again.`);
  }
  // The same check as the user's settings file gets, before anything is made: bubblewrap's argv is built from it.
  const why = init.sandbox === undefined ? undefined : sandboxProblem(init.sandbox);
  if (why) throw new ShepherdError("invalid_params", `init: sandbox must be ${why}.`);
  const sandboxSettings = (init.sandbox as SandboxSettings | undefined) ?? DEFAULT_SANDBOX;
  const state = init.stateDir ?? defaultStateDir(init.agentDir);
  await ensurePrivateDir(state);
  const base = ownEnv();
  const runtimeName = await chooseRuntime({
    setting: init.runtime,
    env: {},
    probes: { herdrServerAnswers: () => herdrServerAnswers({ env: base }), tmuxInstalled: async () => (await tmuxVersion(base)) !== undefined },
  });
  const tmuxSocket = runtimeName === "tmux" ? await privateTmuxSocket(state) : undefined;
  const pinned = { PI_SHEPHERD_RUNTIME: runtimeName, ...(tmuxSocket ? { PI_SHEPHERD_TMUX_SOCKET: tmuxSocket } : {}) };
  const runtimeEnv: NodeJS.ProcessEnv = { ...base, ...pinned };
  const sheepEnv = { ...runtimeEnv, ...init.env, ...pinned };
  const piCommand = inProcessPi(init.piCommand, sheepEnv);
  const { sandbox, egress } = hostSandbox(init, sandboxSettings, state, runtimeEnv, side, refused);
  sandbox.jitiSeed = jitiSeedMaker({ root: join(state, "jiti-seed"), piCommand, entries: [side.sheepExtension] });
  const host = new LocalSheepFiles({
    agentDir: init.agentDir,
    piCommand,
    nodePath: process.execPath,
    launcherPath: side.launcher,
    reportExitPath: side.reportExit,
    sheepExtension: side.sheepExtension,
    // The shepherd's variables over the remote ones, but the sheep's multiplexer is this agent's.
    env: sheepEnv,
    // What the person named in forwardEnv reaches the sheep whatever its name; nothing else of init's does by rule alone.
    carryEnv: Object.keys(init.env),
    depth: init.depth,
    sandbox,
    onWarning: (m) => process.stderr.write(`pi-shepherd agent: ${m}\n`),
  });
  return {
    runtime: makeRuntime(runtimeName, runtimeEnv),
    host,
    workspace: new GitWorkspace({ env: runtimeEnv, worktreesDir: worktreesDir(init.agentDir) }),
    init,
    answer: { runtime: runtimeName, stateDir: state, ...(tmuxSocket ? { tmuxSocket } : {}), home: homedir() },
    egress,
  };
}

/**
 * The sandbox of this host's sheep, as a local shepherd composes its own (src/compose.ts): the
 * user's policy from init, bubblewrap as this host's PATH finds it, and an egress proxy here whose
 * sockets are under this host's state dir and whose allowed hosts come from this host's pi
 * configuration (models.json, settings.json), since the sheep's pi here reads those.
 */
function hostSandbox(
  init: InitParams,
  settings: SandboxSettings,
  state: string,
  env: NodeJS.ProcessEnv,
  side: SheepSide,
  refused?: (e: EgressRefusalEvent) => void,
): { sandbox: SandboxConfig; egress: SheepEgress } {
  const egress = new SheepEgress({
    agentDir: init.agentDir,
    socketsDir: join(state, "egress"),
    allowNetwork: settings.allowNetwork ?? [],
    // The proxy's refusal events (already at most 30 per sheep and minute) go to the shepherd's audit log.
    ...(refused
      ? {
          audit: (e: AuditInput) => {
            if (e.action !== "egress" || e.agentId === undefined || e.target === undefined) return;
            refused({ ev: "egress-refusal", agentId: e.agentId, target: e.target, reason: e.reason ?? "not_allowed", ...(e.error ? { error: e.error } : {}) });
          },
        }
      : {}),
  });
  // The sheep side it runs (launcher, sheep extension, forwarder) is this bundle, under the state dir the
  // sandbox hides: that one directory stays readable, read-only; the rest of the state dir stays hidden.
  const ownCode = [dirname(side.launcher)];
  return { sandbox: { settings, bwrap: bwrapProbe(() => checkBwrap("bwrap", env)), egress, ownCode }, egress };
}
