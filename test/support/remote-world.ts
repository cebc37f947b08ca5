/**
 * The end-to-end world with a remote host beside it: a real pi shepherd here whose user settings
 * name the remote host (by default as "box"), the remote's pi agent dir on the same scripted
 * model, and the checks every remote file makes for what was left on either side. The remote
 * host ends in the world's cleanup, after the shepherds it started and before the model.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type E2eWorld, type E2eWorldOptions, e2eWorld } from "./e2e-world.ts";
import { livingSheep, notKept, sheepFiles, sheepPid } from "./leftovers.ts";
import { type RemoteHost, type RemoteHostOptions, startRemoteHost } from "./remote-host.ts";

export interface RemoteWorldOptions extends Omit<E2eWorldOptions<"server">, "tmux"> {
  /** The host's name in `hosts` (default "box"). */
  hostName?: string;
  /** More of the host's settings (runtime, cwd, agentDir, piCommand, …). */
  host?: Record<string, unknown>;
  /** More hosts, by name, as functions of the remote host (e.g. one whose host key is unknown). */
  moreHosts?: (remote: RemoteHost) => Record<string, Record<string, unknown>>;
  /** The remote host's own options (e.g. a PATH that names stand-ins first). */
  remoteHost?: RemoteHostOptions;
}

export interface RemoteWorld {
  world: E2eWorld;
  remote: RemoteHost;
  hostName: string;
}

export async function remoteWorld(name: string, o: RemoteWorldOptions = {}): Promise<RemoteWorld> {
  const hostName = o.hostName ?? "box";
  let remote: RemoteHost | undefined;
  let world: E2eWorld | undefined;
  try {
    world = await e2eWorld(name, {
      ...o,
      agent: async (dir) => {
        remote = await startRemoteHost(o.remoteHost);
        const base = typeof o.agent === "function" ? await o.agent(dir) : o.agent;
        const hosts = { [hostName]: remote.hostSettings(o.host), ...o.moreHosts?.(remote) };
        return { ...base, shepherdSettings: { ...base?.shepherdSettings, hosts } };
      },
    });
    const r = remote!;
    world.defer(() => r.end());
    await r.useModel(world.model.port);
    return { world, remote: r, hostName };
  } catch (e) {
    await world?.cleanup().catch(() => undefined);
    await remote?.end().catch(() => undefined);
    throw e;
  }
}

/** The remote agent dir as the host can read it (through the keeper's /proc root). */
export function remoteAgentDir(remote: RemoteHost): string {
  return remote.hostPath(remote.agentDir);
}

/** A remote sheep's pid, from the status.json it wrote there. */
export function remoteSheepPid(remote: RemoteHost, agentId: string): Promise<number> {
  return sheepPid(remoteAgentDir(remote), agentId);
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ").trim();
  } catch {
    return "?";
  }
}

/**
 * Processes of the namespace that belong to a remote sheep directory: the launcher names it on
 * its command line, and pi and its children carry it in their environment (as leftovers.ts finds
 * local sheep).
 */
export async function remoteSheepProcesses(remote: RemoteHost): Promise<number[]> {
  const root = `${remote.agentDir}/pi-shepherd/sheep/`;
  const found: number[] = [];
  for (const pid of await remote.pids()) {
    let env = "";
    try {
      env = readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      // gone meanwhile
    }
    if (cmdline(pid).includes(root) || env.split("\0").some((kv) => kv.startsWith(`PI_SHEPHERD_SHEEP_DIR=${root}`))) found.push(pid);
  }
  return found;
}

/** Socket files under a directory (a ControlMaster's control socket, a tmux server's). */
export async function socketsUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.isSocket()) found.push(p);
      else if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return found;
}

/**
 * Nothing of ours on the remote host but what is kept by design (session files, resume cards,
 * evidence): no process in the namespace but the keeper and sshd, no sheep pi; and here no ssh of
 * this host's config once no shepherd runs, and no sheep pi of the local agent dir.
 */
export async function assertNothingLeftRemote(rw: RemoteWorld, o: { shepherdsStopped?: boolean; localPids?: number[] } = {}): Promise<void> {
  const { world, remote } = rw;
  const deadline = Date.now() + 15_000;
  let left = await remote.leftovers();
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = await remote.leftovers();
  }
  const described = left.map((p) => `${p}: ${cmdline(p)}`);
  if (o.shepherdsStopped) {
    assert.deepEqual(described, [], "no process of ours left on the remote host");
    let ssh = remote.localSsh();
    while (ssh.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      ssh = remote.localSsh();
    }
    assert.deepEqual(ssh, [], "no ssh to the host left here");
    assert.deepEqual(await socketsUnder(world.agentDir), [], "no control socket left in the local state dir");
  } else {
    // A running shepherd keeps its agent there (one channel); no sheep pi.
    assert.deepEqual(await remoteSheepProcesses(remote), [], "no sheep pi left on the remote host");
  }
  assert.deepEqual(notKept(await sheepFiles(remoteAgentDir(remote))), [], "no remote sheep file but those kept by design");
  assert.deepEqual(await livingSheep(world.agentDir, o.localPids ?? []), [], "no local sheep pi alive");
}
