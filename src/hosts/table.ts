/**
 * Which machine a sheep runs on, for the routed ports (runtime.ts, routed-sheep-files.ts, workspace.ts):
 * the core gets one Runtime, SheepFiles and Workspace and never learns where a sheep runs. A call
 * goes to this machine's ports or to a remote host's by the sheep's host: the one its start named
 * (PrepareRequest.host, IsolateRequest.host), its record's after that, or the host stamped on a
 * pane id, baseline or worktree. A remote pane id is `<host>/<its id there>`, so pane ids stay
 * unique across machines; a remote host's own ports never see the prefix.
 */
import type { StartMarks } from "./start-marks.ts";
import { ShepherdError } from "../domain/errors.ts";
import type { Runtime } from "../ports/runtime.ts";
import type { SheepFiles } from "../ports/sheep-files.ts";
import type { Workspace } from "../ports/workspace.ts";

export interface HostPorts {
  runtime: Runtime;
  files: SheepFiles;
  workspace?: Workspace;
}

/** Why a host cannot be asked now. */
export interface HostDown {
  since: string;
  reason: string;
}

export interface RemotePorts extends HostPorts {
  /** Undefined while the host answers. */
  down(): HostDown | undefined;
  /**
   * An existing directory there, as an absolute path: `path` as it is when absolute, else under the
   * remote user's home (undefined: the home itself); [cwd_invalid] when it is no directory.
   */
  dir(path: string | undefined): Promise<string>;
  /** Ends the connection and whatever of ours it holds open there (never the sheep). */
  close(): Promise<void>;
}

export interface HostTableOptions {
  local: HostPorts;
  /** The names of the `hosts` setting. */
  hosts: readonly string[];
  /** A host's ports, made once, on first need. */
  connect: (name: string) => RemotePorts;
  /** This machine's marks on the sheep it starts on hosts (none: panes there no record knows are only reported). */
  starts?: StartMarks;
  /** The host a recorded sheep runs on (undefined: this machine): sheep recorded before a reload. */
  hostOf: (agentId: string) => string | undefined;
}

export const PANE_SEP = "/";

export class HostTable {
  readonly #o: HostTableOptions;
  readonly #remotes = new Map<string, RemotePorts>();
  /**
   * The host of every remote sheep this table has routed: a start's before its record holds it, and
   * a record's while it moves (a sheep taken out of the warm pool is in no registry map for a moment).
   * Agent ids are never reused, so an entry never goes stale.
   */
  readonly #known = new Map<string, string>();

  constructor(o: HostTableOptions) {
    this.#o = o;
  }

  get local(): HostPorts {
    return this.#o.local;
  }

  get starts(): StartMarks | undefined {
    return this.#o.starts;
  }

  get names(): readonly string[] {
    return this.#o.hosts;
  }

  /**
   * The hosts where a start of this machine may have left something: those its start marks name
   * (a mark is written before a host is asked and kept until the sheep's files there go), so
   * looking for leftovers connects to no host this machine never started a sheep on. Without
   * marks, every host.
   */
  async markedHosts(): Promise<string[]> {
    if (!this.#o.starts) return [...this.#o.hosts];
    const marks = await this.#o.starts.marked().catch(() => undefined);
    if (!marks) return [...this.#o.hosts];
    const named = new Set([...marks.values()].map((m) => m.host));
    return this.#o.hosts.filter((h) => named.has(h));
  }

  /** A host's ports; [host_unknown] for a name the settings do not have. */
  remote(name: string): RemotePorts {
    const made = this.#remotes.get(name);
    if (made) return made;
    if (!this.#o.hosts.includes(name)) throw unknownHost(name, this.#o.hosts);
    const ports = this.#o.connect(name);
    this.#remotes.set(name, ports);
    return ports;
  }

  /** Why a host does not answer now; undefined while it does, or before anything asked it. */
  down(name: string): HostDown | undefined {
    return this.#remotes.get(name)?.down();
  }

  /** Ends every host's connection (a quit, a reload); the sheep there go on working. */
  async close(): Promise<void> {
    const all = [...this.#remotes.values()];
    this.#remotes.clear();
    await Promise.all(all.map((r) => r.close().catch(() => undefined)));
  }

  /** A start on a host: its sheep's calls go there before its record says so. */
  starting(agentId: string, host: string): void {
    this.#known.set(agentId, host);
  }

  hostOf(agentId: string): string | undefined {
    const known = this.#known.get(agentId);
    if (known !== undefined) return known;
    const recorded = this.#o.hostOf(agentId);
    if (recorded !== undefined) this.#known.set(agentId, recorded);
    return recorded;
  }

  portsOf(host: string | undefined): HostPorts {
    return host === undefined ? this.#o.local : this.remote(host);
  }

  forAgent(agentId: string): HostPorts {
    return this.portsOf(this.hostOf(agentId));
  }

  /** A pane id as the core holds it → its host and the id there. */
  pane(paneId: string, agentId?: string): { host: string | undefined; paneId: string } {
    const cut = paneId.indexOf(PANE_SEP);
    const prefix = cut > 0 ? paneId.slice(0, cut) : undefined;
    const host = (agentId !== undefined ? this.hostOf(agentId) : undefined) ?? (prefix !== undefined && this.#o.hosts.includes(prefix) ? prefix : undefined);
    if (host === undefined) return { host, paneId };
    return { host, paneId: prefix === host ? paneId.slice(cut + 1) : paneId };
  }
}

export function unknownHost(name: string, hosts: readonly string[]): ShepherdError {
  const known = hosts.length
    ? `the hosts are: local, ${hosts.join(", ")}`
    : 'no hosts are set: add one to "hosts" in your user settings (README, Sheep on other machines)';
  return new ShepherdError("host_unknown", `no host is called ${JSON.stringify(name)}; ${known}.`);
}
