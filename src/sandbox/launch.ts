/** A sandboxed sheep's pane command and environment, as the sheep-files port prepares them (src/protocol/local-sheep-files.ts). */
import { join, resolve } from "node:path";
import { ShepherdError } from "../domain/errors.ts";
import { bwrapArgv, paneArgv } from "./bwrap.ts";
import { providerKeyNames, sandboxedEnv } from "./env.ts";
import { codeCaches, dirEntries, gitLayout, homeOf, multiplexerSockets, pathKind, realPath } from "./facts.ts";
import { modelOf, readJson } from "./model-of.ts";
import { sandboxPolicy, type PolicyOptions } from "./policy.ts";
import { seccompFile } from "./seccomp-file.ts";
import type { SandboxSettings } from "./settings.ts";

/** How this machine's sheep files sandbox a sheep. */
export interface SandboxConfig {
  settings: SandboxSettings;
  /** bubblewrap's path once it is known to work here; else [sandbox_unavailable]. */
  bwrap: () => Promise<string>;
  /** The egress proxy: a directory with the sheep's socket, bound into its sandbox; absent, a sandbox has no network. */
  egress?: {
    open(r: { agentId: string; model?: string; logDir: string }): Promise<string>;
    close(agentId: string): Promise<void>;
  };
  /** Directories of pi-shepherd's own code the sheep runs that live in a hidden place (a remote host's bundle): read-only inside. */
  ownCode?: readonly string[];
  /** The seed of the sheep's loader cache (src/sandbox/jiti-seed.ts): its directory, once made; absent or undefined, the sheep has none. */
  jitiSeed?: () => Promise<string | undefined>;
}

export interface SandboxedLaunch {
  bwrap: string;
  config: SandboxConfig;
  /** The shepherd's env: its HOME, its multiplexer's sockets. */
  env: NodeJS.ProcessEnv;
  agentDir: string;
  stateDir: string;
  sheepDir: string;
  sessionFile: string;
  worktreesDir: string;
  cwd: string;
  egressDir?: string;
  /** What runs inside: the launcher and its spec. */
  argv: readonly string[];
  /** More programs it runs (pi's command, the sheep extension): readable even where they lie under /tmp. */
  runs?: readonly string[];
  /** The shepherd's seed of the sheep's loader cache, bound read-only for the launcher to copy. */
  jitiSeed?: string;
}

/** Refuses a cwd no sandbox can have, before anything of the sheep is written. */
export function checkSandboxCwd(cwd: string): void {
  // Its cwd is writable: the root would be every file the user may write, the host's /tmp again among them.
  if (resolve(cwd) === "/")
    throw new ShepherdError("invalid_params", 'a sandboxed sheep cannot work in "/": its cwd is writable; give it a project directory.');
}

export function sandboxedPaneArgv(s: SandboxedLaunch): string[] {
  checkSandboxCwd(s.cwd);
  const home = homeOf(s.env);
  const git = gitLayout(s.cwd);
  const o: PolicyOptions = {
    ...(s.egressDir !== undefined ? { egressDir: s.egressDir } : {}),
    ...(s.config.ownCode ? { ownCode: s.config.ownCode } : {}),
    runs: [...s.argv, ...(s.runs ?? [])],
  };
  const policy = sandboxPolicy(
    s.config.settings,
    {
      home,
      cwd: s.cwd,
      agentDir: s.agentDir,
      stateDir: s.stateDir,
      sheepDir: s.sheepDir,
      sessionFile: s.sessionFile,
      worktreesDir: s.worktreesDir,
      ...(git ? { git } : {}),
      sockets: multiplexerSockets(s.env),
      codeCaches: { ...codeCaches(), ...(s.jitiSeed !== undefined ? { jiti: s.jitiSeed } : {}) },
      kind: pathKind,
      entries: dirEntries,
      real: realPath,
    },
    o,
  );
  const plain: Record<string, string> = { HOME: home, SHELL: "/bin/sh" };
  for (const k of ["USER", "LOGNAME"]) if (s.env[k]) plain[k] = s.env[k]!;
  // node reads these only while it starts: set before the launcher's node starts, pi runs in that
  // very process; left to the spec, the launcher must start a second node for pi (about 0.1 s more).
  for (const k of STARTUP_CA) if (s.env[k]) plain[k] = s.env[k]!;
  return paneArgv(bwrapArgv({ bwrap: s.bwrap, policy, env: plain, argv: s.argv }), seccompFile(s.stateDir));
}

/** The CA settings a sandbox carries (src/sandbox/env.ts) that node reads only at its start (src/launch/launcher.mjs's STARTUP_ONLY). */
const STARTUP_CA = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"] as const;

/** The launch spec's env for a sandboxed sheep: of the secrets, only its model provider's key (and what the user forwards). */
export function sandboxSpecEnv(carried: Record<string, string>, o: { model?: string; agentDir: string; forward?: readonly string[] }): Record<string, string> {
  const { provider } = modelOf(o.model, o.agentDir);
  const apiKey = provider ? modelsApiKey(o.agentDir, provider) : undefined;
  return sandboxedEnv(carried, [...providerKeyNames(provider, apiKey), ...(o.forward ?? [])]);
}

function modelsApiKey(agentDir: string, provider: string): string | undefined {
  const models = readJson(join(agentDir, "models.json"));
  const p = (models?.providers as Record<string, { apiKey?: unknown }> | undefined)?.[provider];
  return typeof p?.apiKey === "string" ? p.apiKey : undefined;
}
