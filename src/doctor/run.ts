/**
 * The doctor: every check, in the order a person would look. It changes nothing: files are read,
 * multiplexers are asked, pi is run with --version, and that is all.
 */
import { discoverAgents } from "../definitions/discover.ts";
import type { AgentRecord } from "../ports/types.ts";
import { piPackageOf } from "../launch/pi-package.ts";
import { stateDir } from "../protocol/layout.ts";
import { loadSettings } from "../settings.ts";
import { agentChecks, environmentCheck, settingsChecks, stateDirChecks } from "./config.ts";
import { herdChecks } from "./herd.ts";
import { hostChecks } from "./hosts.ts";
import { runtimeChecks } from "./runtime.ts";
import { sandboxCheck } from "./sandbox.ts";
import { hostSpecChecks } from "./specs.ts";
import { type Check, report, type DoctorReport, warn } from "./types.ts";
import { plain } from "./config.ts";
import { nodeCheck, piCheck, piCommandCheck } from "./versions.ts";

export interface DoctorInput {
  env: NodeJS.ProcessEnv;
  cwd: string;
  agentDir: string;
  bundledDir: string;
  projectTrusted?: boolean;
  /** The node and pi running this shepherd (argv), when known. */
  shepherdPi?: string[];
  /** Records this shepherd holds, and who it is. */
  records?: readonly AgentRecord[];
  owner?: string;
  ownerAlive(owner: string): boolean;
  /** What the running shepherd finds that starts cut short left on its hosts (this machine's are read here). */
  leftovers?: () => Promise<{ specs: readonly { agentId: string; host?: string }[]; panes: readonly { agentId: string; host: string; paneId: string }[] }>;
  /** Only what decides the runtime: quick enough to add to an error. */
  brief?: boolean;
}

export async function runDoctor(input: DoctorInput): Promise<DoctorReport> {
  const { env } = input;
  // Read fresh: the person may just have edited a file to fix what the last run said.
  const loaded = await loadSettings(input.agentDir, input.cwd, input.projectTrusted === undefined ? {} : { projectTrusted: input.projectTrusted });
  const rt = await runtimeChecks(env, loaded.settings.runtime);
  if (input.brief) return report(rt.checks);
  const pi = input.shepherdPi?.[1] ? piPackageOf(input.shepherdPi[1]) : undefined;
  const found = await discoverAgents({
    cwd: input.cwd,
    scope: loaded.settings.agentScope,
    agentDir: input.agentDir,
    bundledDir: input.bundledDir,
    ...(input.projectTrusted === undefined ? {} : { projectTrusted: input.projectTrusted }),
  });
  return report([
    nodeCheck(process.version, pi),
    piCheck(pi),
    await piCommandCheck(loaded.settings.piCommand ?? input.shepherdPi, env, loaded.paths.user),
    ...rt.checks,
    await sandboxCheck(loaded.settings.sandbox, env),
    ...environmentCheck(env),
    ...(await stateDirChecks(stateDir(input.agentDir))),
    ...settingsChecks(loaded),
    ...(await hostChecks(loaded.settings.hosts, env, loaded.paths.user, loaded.settings.sandbox)),
    ...(await hostLeftoverChecks(input.leftovers)),
    ...agentChecks(found, loaded.settings.agentScope),
    ...(await herdChecks({
      stateDir: stateDir(input.agentDir),
      env,
      records: input.records ?? [],
      ...(input.owner ? { owner: input.owner } : {}),
      ownerAlive: input.ownerAlive,
      ...(rt.chosen ? { chosen: rt.chosen } : {}),
    })),
  ]);
}

/** Per host, what the running shepherd found there that no record knows; nothing without a shepherd. */
export async function hostLeftoverChecks(leftovers: DoctorInput["leftovers"]): Promise<Check[]> {
  const found = await leftovers?.().catch(() => undefined);
  if (!found) return [];
  const byHost = new Map<string, string[]>();
  for (const s of found.specs) if (s.host !== undefined) byHost.set(s.host, [...(byHost.get(s.host) ?? []), s.agentId]);
  const panes = found.panes.map((p) =>
    warn(
      `host ${p.host}: orphan pane`,
      `pane ${plain(p.paneId)} there carries the mark of ${plain(p.agentId)}, which this machine started and no record knows (a shepherd stopped during its start)`,
      "/shepherd prune",
    ),
  );
  return [...[...byHost].flatMap(([host, ids]) => hostSpecChecks(host, ids)), ...panes];
}
