/** The runtime port over a remote host's agent: its tmux or herdr, asked through one connection. */
import type { CreatedPane, CreatePaneRequest, PaneLiveness, PaneRef, Placement, Runtime, RuntimeName } from "../../ports/runtime.ts";
import { PANE_ID } from "../../domain/ids.ts";
import type { RemoteCall } from "./call.ts";
import { CallLost, LOST_CALL_WAIT_MS, whileAway } from "./lost-call.ts";
import { arrayOf, expect, fields, type Guard, isAgentId, isObject, isString, oneOf, optional } from "./shape.ts";

const exitStatus = fields({ code: (v) => v === null || Number.isSafeInteger(v), signal: optional(isString) });
const liveness: Guard = (v) => isObject(v) && (v.state === "alive" || v.state === "gone" || (v.state === "exited" && exitStatus(v.exit)));
/** A pane id the records can keep: any other would be set aside at the next load, and the sheep with it. */
const isPaneId: Guard = (v) => typeof v === "string" && PANE_ID.test(v);
const paneRef = fields({ paneId: isPaneId, agentId: isAgentId });

export class RemoteRuntime implements Runtime {
  constructor(
    private readonly remote: RemoteCall,
    private readonly runtimeName: RuntimeName | (() => RuntimeName),
    /** The host's name, for the words of errors. */
    private readonly host: string,
    /** The host's attach hint as a line a person runs here (connect.ts: through ssh); absent: as it came. */
    private readonly attachHere?: (hint: string, runtime: RuntimeName) => string | undefined,
    /** How long a pane create lost on its way waits for the host to come back, to close what it made. */
    private readonly lostCallWaitMs = LOST_CALL_WAIT_MS,
  ) {}

  get name(): RuntimeName {
    return typeof this.runtimeName === "function" ? this.runtimeName() : this.runtimeName;
  }

  async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    let v: unknown;
    try {
      v = await this.remote.call("runtime.createPane", [req]);
    } catch (e) {
      if (e instanceof CallLost) throw await this.closeLost(req.agentId);
      throw e;
    }
    const pane = expect<CreatedPane>(
      v,
      fields({ paneId: isPaneId, attachHint: optional(isString), runtime: optional(oneOf("tmux", "herdr")) }),
      "runtime.createPane",
      this.host,
    );
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
    const v = await this.remote.call("runtime.liveness", [panes.map((p) => ({ paneId: p.paneId, agentId: p.agentId }))]);
    const pairs = expect<[string, PaneLiveness][]>(
      v,
      arrayOf((e) => Array.isArray(e) && e.length === 2 && isString(e[0]) && liveness(e[1])),
      "runtime.liveness",
      this.host,
    );
    // Only the panes asked about: an answer cannot make up sheep.
    const asked = new Set(panes.map((p) => p.agentId));
    return new Map(pairs.filter(([id]) => asked.has(id)));
  }

  async markedPanes(): Promise<PaneRef[]> {
    const v = await this.remote.call("runtime.markedPanes", []);
    return expect<PaneRef[]>(v, arrayOf(paneRef), "runtime.markedPanes", this.host).map((p) => ({ paneId: p.paneId, agentId: p.agentId }));
  }

  async read(paneId: string, lines: number): Promise<string> {
    return expect(await this.remote.call("runtime.read", [{ paneId, agentId: "" }, lines]), isString, "runtime.read", this.host);
  }

  async close(paneId: string, agentId: string): Promise<boolean | undefined> {
    return expect(await this.remote.call("runtime.close", [paneId, agentId]), optional(oneOf(true, false)), "runtime.close", this.host);
  }

  async relabel(pane: PaneRef, label: string, placement: Placement): Promise<void> {
    await this.remote.call("runtime.relabel", [pane, label, placement]);
  }

  async agentStatus(paneId: string): Promise<string | undefined> {
    return expect(await this.remote.call("runtime.agentStatus", [{ paneId, agentId: "" }]), optional(isString), "runtime.agentStatus", this.host);
  }
}
