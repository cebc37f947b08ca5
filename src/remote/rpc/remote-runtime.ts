/** The runtime port over a remote host's agent: its tmux or herdr, asked through one connection. */
import type {
  CreatedPane,
  CreatePaneRequest,
  PaneLiveness,
  PaneRef,
  PaneSink,
  PaneWatch,
  Placement,
  ReportedState,
  Runtime,
  RuntimeName,
} from "../../ports/runtime.ts";
import type { RemoteCall } from "./call.ts";
import { CallLost, LOST_CALL_WAIT_MS, whileAway } from "./lost-call.ts";
import { RemoteTerminals } from "./remote-terminal.ts";
import { expect } from "./shape.ts";
import { ask } from "./wire/method.ts";
import { RUNTIME_WIRE as W } from "./wire/runtime.ts";

export class RemoteRuntime implements Runtime {
  private readonly terminals: RemoteTerminals;

  constructor(
    private readonly remote: RemoteCall,
    private readonly runtimeName: RuntimeName | (() => RuntimeName),
    /** The host's name, for the words of errors. */
    private readonly host: string,
    /** The host's attach hint as a line a person runs here (connect.ts: through ssh); absent: as it came. */
    private readonly attachHere?: (hint: string, runtime: RuntimeName) => string | undefined,
    /** How long a pane create lost on its way waits for the host to come back, to close what it made. */
    private readonly lostCallWaitMs = LOST_CALL_WAIT_MS,
  ) {
    this.terminals = new RemoteTerminals(remote, host);
  }

  get name(): RuntimeName {
    return typeof this.runtimeName === "function" ? this.runtimeName() : this.runtimeName;
  }

  async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    let v: unknown;
    try {
      v = await this.remote.call(W.createPane.name, [req]);
    } catch (e) {
      if (e instanceof CallLost) throw await this.closeLost(req.agentId);
      throw e;
    }
    const pane = expect<CreatedPane>(v, (a) => W.createPane.answer(a, [req]), W.createPane.name, this.host);
    const runtime = pane.runtime ?? this.name;
    const hint = pane.attachHint === undefined ? undefined : this.attachHere ? this.attachHere(pane.attachHint, runtime) : pane.attachHint;
    return { paneId: pane.paneId, runtime, ...(hint !== undefined ? { attachHint: hint } : {}) };
  }

  /**
   * A create lost on its way may have made a pane there, its pi running, that no record here
   * holds: once the host is back it is found by its mark and closed (a start that failed owns
   * nothing). The error says which it was.
   */
  private async closeLost(agentId: string): Promise<CallLost> {
    const closed = await whileAway(this.remote, this.lostCallWaitMs, async () => {
      const ours = (await this.markedPanes()).filter((p) => p.agentId === agentId);
      for (const p of ours) await this.close(p.paneId, agentId);
      return ours.length;
    });
    if (!closed) {
      return new CallLost(
        `host "${this.host}" went away while the pane of ${agentId} was being made, and did not come back within ${Math.round(this.lostCallWaitMs / 1000)} s: a pane may run there with pi in it that nothing here holds. Once the host is back, close it there (its tmux window or herdr tab is named for the sheep's label).`,
      );
    }
    const made = closed.value > 0 ? "the pane it had made there is closed" : "it had made no pane there";
    return new CallLost(`host "${this.host}" went away while the pane of ${agentId} was being made; back again, ${made}. Start the sheep again.`);
  }

  async liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>> {
    const pairs = await ask<[string, PaneLiveness][], [PaneRef[]]>(
      this.remote,
      this.host,
      W.liveness,
      panes.map((p) => ({ paneId: p.paneId, agentId: p.agentId })),
    );
    // Only the panes asked about: an answer cannot make up sheep.
    const asked = new Set(panes.map((p) => p.agentId));
    return new Map(pairs.filter(([id]) => asked.has(id)));
  }

  async markedPanes(): Promise<PaneRef[]> {
    return (await ask<PaneRef[], []>(this.remote, this.host, W.markedPanes)).map((p) => ({ paneId: p.paneId, agentId: p.agentId }));
  }

  async read(paneId: string, lines: number): Promise<string> {
    return ask(this.remote, this.host, W.read, { paneId, agentId: "" }, lines);
  }

  async close(paneId: string, agentId: string): Promise<boolean | undefined> {
    return ask(this.remote, this.host, W.close, paneId, agentId);
  }

  async relabel(pane: PaneRef, label: string, placement: Placement): Promise<void> {
    await ask(this.remote, this.host, W.relabel, pane, label, placement);
  }

  /**
   * Only herdr tells an agent's status; a tmux there has none to tell, so it is not asked: a look
   * at a herd of a host's sheep would otherwise cost a round trip a sheep for nothing.
   */
  async agentStatus(paneId: string): Promise<string | undefined> {
    if (this.name !== "herdr") return undefined;
    return ask(this.remote, this.host, W.agentStatus, { paneId, agentId: "" });
  }

  /** Answered by the host's own runtime: herdr there is told, a tmux there does nothing. The call's deadline is the link's. */
  async reportState(paneId: string, state: ReportedState): Promise<void> {
    await ask(this.remote, this.host, W.reportState, paneId, state);
  }

  /** The pane's terminal through the link (remote-terminal.ts): the agent there watches with that host's tmux or herdr. */
  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    return this.terminals.watch(pane, sink);
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    await this.terminals.sendKeys(pane, text);
  }
}
