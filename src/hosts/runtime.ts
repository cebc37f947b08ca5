/** The runtime port routed by host (see table.ts): this machine's multiplexer, or a host's. */
import type {
  CreatedPane,
  CreatePaneRequest,
  Direction,
  PaneLiveness,
  PaneRef,
  PaneSink,
  PaneWatch,
  Placement,
  ReportedState,
  Runtime,
  RuntimeName,
} from "../ports/runtime.ts";
import { ShepherdError } from "../domain/errors.ts";
import { type HostTable, PANE_SEP } from "./table.ts";

export class RoutedRuntime implements Runtime {
  readonly name: RuntimeName;

  constructor(private readonly table: HostTable) {
    this.name = table.local.runtime.name;
  }

  async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    const host = this.table.hostOf(req.agentId);
    if (host === undefined) return this.table.local.runtime.createPane(req);
    const remote = this.table.remote(host).runtime;
    const pane = await remote.createPane(req);
    return { ...pane, paneId: `${host}${PANE_SEP}${pane.paneId}`, runtime: pane.runtime ?? remote.name };
  }

  async liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>> {
    const byHost = new Map<string | undefined, PaneRef[]>();
    for (const p of panes) {
      const at = this.table.pane(p.paneId, p.agentId);
      // Pushed, not copied: a herd's question stays linear in its panes.
      const refs = byHost.get(at.host);
      if (refs) refs.push({ agentId: p.agentId, paneId: at.paneId });
      else byHost.set(at.host, [{ agentId: p.agentId, paneId: at.paneId }]);
    }
    const answers = await Promise.all(
      [...byHost].map(([host, refs]) =>
        host === undefined
          ? this.table.local.runtime.liveness(refs)
          : // A host that does not answer says nothing of its panes (they are not gone), and
            // keeps no sheep of this machine from its answer.
            Promise.resolve()
              .then(() => this.table.remote(host).runtime.liveness(refs))
              .catch(() => new Map<string, PaneLiveness>()),
      ),
    );
    return new Map(answers.flatMap((m) => [...m]));
  }

  /** This machine's: the doctor compares them with this machine's records. */
  markedPanes(): Promise<PaneRef[]> {
    return this.table.local.runtime.markedPanes();
  }

  async hostPanes(): Promise<(PaneRef & { host: string; owner: string })[]> {
    const starts = await this.table.starts?.marked().catch(() => undefined);
    if (!starts || starts.size === 0) return [];
    const hosts = new Set([...starts.values()].map((m) => m.host));
    const found = await Promise.all(
      this.table.names
        .filter((host) => hosts.has(host))
        .map((host) =>
          Promise.resolve()
            .then(() => this.table.remote(host).runtime.markedPanes())
            .then((panes) =>
              panes.flatMap((p) => {
                const mark = starts.get(p.agentId);
                return mark?.host === host ? [{ agentId: p.agentId, paneId: `${host}${PANE_SEP}${p.paneId}`, host, owner: mark.owner }] : [];
              }),
            )
            .catch(() => [] as (PaneRef & { host: string; owner: string })[]),
        ),
    );
    // Routed to its host from now on: a prune closes the pane and cleans the sheep's files there.
    for (const p of found.flat()) if (this.table.hostOf(p.agentId) === undefined) this.table.starting(p.agentId, p.host);
    return found.flat();
  }

  read(paneId: string, lines: number): Promise<string> {
    const at = this.table.pane(paneId);
    return this.table.portsOf(at.host).runtime.read(at.paneId, lines);
  }

  close(paneId: string, agentId: string): Promise<boolean | undefined> {
    const at = this.table.pane(paneId, agentId);
    return this.table.portsOf(at.host).runtime.close(at.paneId, agentId);
  }

  async relabel(pane: PaneRef, label: string, placement: Placement): Promise<void> {
    const at = this.table.pane(pane.paneId, pane.agentId);
    await this.table.portsOf(at.host).runtime.relabel?.({ agentId: pane.agentId, paneId: at.paneId }, label, placement);
  }

  /** A machine whose multiplexer cannot move a pane (herdr, a host's) says so: the caller keeps the pane where it is. */
  async place(pane: PaneRef, placement: "pane" | "tab", direction: Direction): Promise<void> {
    const at = this.table.pane(pane.paneId, pane.agentId);
    const runtime = this.table.portsOf(at.host).runtime;
    if (!runtime.place) throw new ShepherdError("runtime_error", `${runtime.name} cannot move a sheep's pane; it stays where it is.`);
    await runtime.place({ agentId: pane.agentId, paneId: at.paneId }, placement, direction);
  }

  async agentStatus(paneId: string): Promise<string | undefined> {
    const at = this.table.pane(paneId);
    return this.table.portsOf(at.host).runtime.agentStatus?.(at.paneId);
  }

  /** To the sheep's machine's multiplexer, where it shows such a state; elsewhere nothing. */
  async reportState(paneId: string, state: ReportedState): Promise<void> {
    const at = this.table.pane(paneId);
    await this.table.portsOf(at.host).runtime.reportState?.(at.paneId, state);
  }

  /** To the sheep's machine's multiplexer: this machine's, or a host's through its link (its agent watches there). */
  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    const at = this.table.pane(pane.paneId, pane.agentId);
    return this.terminalOf(at.host).watch!({ agentId: pane.agentId, paneId: at.paneId }, sink);
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    const at = this.table.pane(pane.paneId, pane.agentId);
    await this.terminalOf(at.host).sendKeys!({ agentId: pane.agentId, paneId: at.paneId }, text);
  }

  private terminalOf(host: string | undefined): Runtime {
    const runtime = this.table.portsOf(host).runtime;
    if (!runtime.watch || !runtime.sendKeys) {
      const where = host === undefined ? runtime.name : `${runtime.name} on host ${host}`;
      throw new ShepherdError(
        "runtime_unavailable",
        `${where} cannot stream a pane's output to the panel; look at the sheep in ${runtime.name} itself, or read its screen in the panel.`,
      );
    }
    return runtime;
  }
}
