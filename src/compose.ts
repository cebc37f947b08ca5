/**
 * The composition root: settings -> runtime -> sheep-files port -> core. The only place that knows
 * every piece; src/session/shepherd-session.ts calls it (through the lazily loaded parts) for pi.
 */
import { fileStartMarks } from "./hosts/start-marks.ts";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ShepherdError } from "./domain/errors.ts";
import { newId } from "./domain/ids.ts";
import { Shepherd } from "./core/shepherd.ts";
import { defaultPiCommand } from "./launch/pi-command.ts";
import type { RuntimeName } from "./ports/runtime.ts";
import { runDoctor } from "./doctor/run.ts";
import type { DoctorReport } from "./doctor/types.ts";
import { type AuditInput, type AuditSink, stamped } from "./ports/audit.ts";
import { AuditLog } from "./stores/audit-log.ts";
import { LocalSheepFiles } from "./protocol/local-sheep-files.ts";
import { GitWorkspace } from "./git/workspace.ts";
import { notifyDir, stateDir, worktreesDir } from "./protocol/layout.ts";
import { pidRunning } from "./protocol/pid.ts";
import { FileStateStore } from "./stores/state-store.ts";
import { FileSpendLedger } from "./stores/spend-ledger.ts";
import { chooseRuntime } from "./runtimes/choose.ts";
import { herdrServerAnswers } from "./runtimes/herdr/index.ts";
import { makeRuntime } from "./runtimes/make.ts";
import { tmuxVersion } from "./runtimes/tmux/tmux-cli.ts";
import { bwrapProbe } from "./sandbox/probe.ts";
import { jitiSeedMaker } from "./sandbox/jiti-seed.ts";
import type { SandboxConfig } from "./sandbox/launch.ts";
import { SheepEgress } from "./sandbox/egress/sheep-egress.ts";
import { agentDirOf, loadSettings, type LoadedSettings } from "./settings.ts";
import { RoutedRuntime } from "./hosts/runtime.ts";
import { RoutedSheepFiles } from "./hosts/routed-sheep-files.ts";
import { HostTable } from "./hosts/table.ts";
import { connectRemote } from "./remote/connect.ts";
import { RoutedWorkspace } from "./hosts/workspace.ts";
import type { HerdEvent } from "./ports/events.ts";
import { Notifier } from "./notify/notifier.ts";
import { Outbox } from "./notify/outbox.ts";
import { FileSenderLock } from "./notify/lock.ts";
import { makeChannels, type NoticeSinks } from "./notify/channels/make.ts";

export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export { agentDirOf };

export interface ShepherdApp {
  shepherd: Shepherd;
  loaded: LoadedSettings;
  agentDir: string;
  bundledDir: string;
  runtime: RuntimeName;
  /** The machines of the `hosts` setting and their connections. */
  hosts: HostTable;
  /** The egress proxy of this machine's sandboxed sheep (their sockets end with the shepherd; the next one serves them again). */
  egress: SheepEgress;
  /** The notices of the `notify` setting: its outbox and channels; the session hands it pi's screen and the panel (`sinks`). */
  notify: { notifier: Notifier; sinks: NoticeSinks };
}

export interface ComposeOptions {
  env?: NodeJS.ProcessEnv;
  cwd: string;
  /** The pi running this shepherd, as argv; found from process.argv when not given. */
  piCommand?: string[];
  extraPiArgs?: string[];
  /** pi-shepherd's trust rule for the project (src/project-trust.ts); unless true, its settings file is left out. */
  projectTrusted?: boolean;
  /** Where problems found later (the state file failing to write) are told to the person. */
  onWarning?: (message: string) => void;
  /** Where the core tells what happened to each sheep (see auditTrail). */
  audit?: AuditSink;
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

/**
 * An owner is alive while its process runs; in this process, only our own token is. A zombie is
 * not: a quit shepherd's pi has ended, though its parent (the multiplexer) has not reaped it yet.
 */
export function ownerAlive(owner: string): boolean {
  const [pidText, token] = owner.split(":");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return token === ownerToken();
  return pidRunning(pid);
}

const sheepExtensionPath = join(packageRoot, "extensions", "sheep.ts");
const shepherdEntryPath = join(packageRoot, "extensions", "shepherd.ts");
const shepherdMainPath = join(packageRoot, "extensions", "shepherd-main.ts");

/** The sheep-files port with this package's launcher and sheep extension, run by the shepherd's node. */
export function sheepFiles(o: {
  agentDir: string;
  piCommand: readonly string[];
  env: NodeJS.ProcessEnv;
  depth: number;
  extraPiArgs?: readonly string[];
  sandbox?: SandboxConfig;
  onWarning?: (message: string) => void;
}) {
  return new LocalSheepFiles({
    ...o,
    nodePath: process.execPath,
    launcherPath: join(packageRoot, "src", "launch", "launcher.mjs"),
    reportExitPath: join(packageRoot, "src", "launch", "report-exit.sh"),
    sheepExtension: sheepExtensionPath,
  });
}

/** The audit log of this agent dir; one per shepherd process, shared by the core and the tool's entry. */
export function auditTrail(env: NodeJS.ProcessEnv, onWarning?: (message: string) => void): AuditSink {
  return new AuditLog({ dir: stateDir(agentDirOf(env)), ...(onWarning ? { onWarning } : {}) });
}

export interface DoctorOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  projectTrusted?: boolean;
  /** The composed shepherd, when there is one: its records are newer than the state file. */
  shepherd?: Shepherd;
  brief: boolean;
}

/** The doctor, wired like the shepherd it examines: same agent dir, same pi, same owner. */
export function doctor(o: DoctorOptions): Promise<DoctorReport> {
  const env = o.env ?? process.env;
  const shepherdPi = defaultPiCommand();
  return runDoctor({
    env,
    cwd: o.cwd,
    agentDir: agentDirOf(env),
    bundledDir: join(packageRoot, "agents"),
    ...(o.projectTrusted === undefined ? {} : { projectTrusted: o.projectTrusted }),
    ...(shepherdPi ? { shepherdPi } : {}),
    records: o.shepherd ? [...o.shepherd.registry.agents.values()] : [],
    ...(o.shepherd ? { leftovers: () => o.shepherd!.leftovers() } : {}),
    owner: processOwner(),
    ownerAlive,
    brief: o.brief,
  });
}

export async function composeShepherd(o: ComposeOptions): Promise<ShepherdApp> {
  const env = o.env ?? process.env;
  const agentDir = agentDirOf(env);
  const loaded = await loadSettings(agentDir, o.cwd, o.projectTrusted === undefined ? {} : { projectTrusted: o.projectTrusted });
  const { settings } = loaded;
  const runtimeName = await chooseRuntime({
    setting: settings.runtime,
    env,
    probes: { herdrServerAnswers: () => herdrServerAnswers({ env }), tmuxInstalled: async () => (await tmuxVersion(env)) !== undefined },
  });
  const runtime = makeRuntime(runtimeName, env);
  const piCommand = settings.piCommand ?? o.piCommand ?? defaultPiCommand();
  if (!piCommand) {
    throw new ShepherdError("runtime_unavailable", 'cannot tell which pi runs this shepherd; set "piCommand" (e.g. ["pi"]) in the shepherd settings.');
  }
  const depth = Number(env.PI_SHEPHERD_DEPTH ?? "0") || 0;
  // A sandboxed sheep has no network of its own: what it reaches goes through this shepherd's proxy.
  const audit = o.audit;
  const egressAudit = audit ? (e: AuditInput) => audit.record(stamped(e, processOwner(), Date.now())) : undefined;
  const egress = new SheepEgress({
    agentDir,
    socketsDir: join(stateDir(agentDir), "egress"),
    allowNetwork: settings.sandbox.allowNetwork ?? [],
    ...(egressAudit ? { audit: egressAudit } : {}),
  });
  // A sheep's pi loads the sheep extension, and pi-shepherd's entry where the package is installed; where
  // the user lets a sheep shepherd (maxDepth), the shepherd's whole graph too.
  const sheepLoads = [sheepExtensionPath, shepherdEntryPath, ...(settings.maxDepth > depth ? [shepherdMainPath] : [])];
  const jitiSeed = jitiSeedMaker({ root: join(stateDir(agentDir), "jiti-seed"), piCommand, entries: sheepLoads });
  // Where every sheep is sandboxed, the seed is made while the shepherd starts, not by its first sheep.
  if (settings.sandbox.default === "on") void jitiSeed();
  const sandbox: SandboxConfig = { settings: settings.sandbox, bwrap: bwrapProbe(), egress, jitiSeed };
  const host = sheepFiles({
    agentDir,
    piCommand,
    env,
    depth: depth + 1,
    sandbox,
    ...(o.extraPiArgs ? { extraPiArgs: o.extraPiArgs } : {}),
    ...(o.onWarning ? { onWarning: o.onWarning } : {}),
  });
  const workspace = new GitWorkspace({ env, worktreesDir: worktreesDir(agentDir) });
  const notify = notifierFor(agentDir, loaded, env, o.onWarning);
  const publish = (e: HerdEvent) => notify.notifier.publish(e);
  // The records are the shepherd's: a sheep recorded before a reload is routed by its record's host.
  let recorded: (agentId: string) => string | undefined = () => undefined;
  const hosts = new HostTable({
    local: { runtime, files: host, workspace },
    hosts: Object.keys(settings.hosts),
    connect: (name) =>
      connectRemote(name, settings.hosts[name]!, {
        localStateDir: stateDir(agentDir),
        env,
        depth: depth + 1,
        sandbox: settings.sandbox,
        ...(egressAudit ? { audit: egressAudit } : {}),
        onHost: (up, reason) =>
          publish({
            kind: "host",
            key: `host:${name}:${up ? "back" : "lost"}:${Date.now()}`,
            host: name,
            text: up ? "back: connected again" : `lost: ${reason}`,
            at: Date.now(),
          }),
      }),
    hostOf: (agentId) => recorded(agentId),
    starts: fileStartMarks(join(stateDir(agentDir), "host-starts"), processOwner()),
  });
  const shepherd = new Shepherd({
    runtime: new RoutedRuntime(hosts),
    files: new RoutedSheepFiles(hosts),
    owner: processOwner(),
    store: new FileStateStore(stateDir(agentDir), o.onWarning ? { onWarning: o.onWarning } : {}),
    ownerAlive,
    ...(o.audit ? { audit: o.audit } : {}),
    ...(o.onWarning ? { onWarning: o.onWarning } : {}),
    startTimeoutMs: settings.startTimeout * 1000,
    defaultWaitTimeoutSec: settings.waitTimeout,
    workspace: new RoutedWorkspace(hosts),
    evidence: settings.evidence,
    evidenceInlineLines: settings.diffInlineLines,
    events: publish,
    // Every shepherd of this user adds to one day's ledger (spec: Budgets).
    ledger: new FileSpendLedger(join(stateDir(agentDir), "budget")),
    budgets: settings.budgets,
  });
  recorded = (agentId) => (shepherd.registry.agents.get(agentId) ?? shepherd.registry.warm.get(agentId))?.host;
  return { shepherd, hosts, egress, notify, loaded, agentDir, bundledDir: join(packageRoot, "agents"), runtime: runtimeName };
}

/** The notifier of the user's `notify` setting: its outbox under the state dir, shared by every shepherd of this agent dir. */
function notifierFor(agentDir: string, loaded: LoadedSettings, env: NodeJS.ProcessEnv, onWarning?: (m: string) => void): ShepherdApp["notify"] {
  const sinks: NoticeSinks = {};
  const dir = notifyDir(agentDir);
  const notifier = new Notifier({
    outbox: new Outbox(join(dir, "outbox")),
    channels: makeChannels(loaded.settings.notify.channels, sinks, env),
    lock: new FileSenderLock(dir),
    link: () => sinks.link?.(),
    ...(onWarning ? { onError: onWarning } : {}),
  });
  return { notifier, sinks };
}
