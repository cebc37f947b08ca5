/** The runtime port over a remote host's agent: its tmux or herdr, asked through one connection. */
import type { CreatedPane, CreatePaneRequest, PaneLiveness, PaneRef, Placement, Runtime, RuntimeName } from "../../ports/runtime.ts";
import { isWellFormedId } from "../../domain/ids.ts";
import { PANE_ID } from "../../protocol/state-records.ts";
import { shellLine } from "../../runtimes/shell-line.ts";
import type { RemoteCall } from "./call.ts";
import { arrayOf, expect, fields, type Guard, isObject, isString, oneOf, optional } from "./shape.ts";

const exitStatus = fields({ code: (v) => v === null || Number.isSafeInteger(v), signal: optional(isString) });
const liveness: Guard = (v) => isObject(v) && (v.state === "alive" || v.state === "gone" || (v.state === "exited" && exitStatus(v.exit)));
/** A pane id the records can keep: any other would be set aside at the next load, and the sheep with it. */
const isPaneId: Guard = (v) => typeof v === "string" && PANE_ID.test(v);
const paneRef = fields({ paneId: isPaneId, agentId: (v) => typeof v === "string" && isWellFormedId(v, "agent") });

export class RemoteRuntime implements Runtime {
  constructor(
    private readonly remote: RemoteCall,
    private readonly runtimeName: RuntimeName | (() => RuntimeName),
    /** The host's name, for the words of errors. */
    private readonly host: string,
    /** How a person here reaches that machine: the multiplexer's attach hint is for there, run through ssh. */
    private readonly attachVia?: { ssh: string; sshOptions?: readonly string[] },
  ) {}

  get name(): RuntimeName {
    return typeof this.runtimeName === "function" ? this.runtimeName() : this.runtimeName;
  }

  async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    const v = await this.remote.call("runtime.createPane", [req]);
    const pane = expect<CreatedPane>(
      v,
      fields({ paneId: isPaneId, attachHint: optional(isString), runtime: optional(oneOf("tmux", "herdr")) }),
      "runtime.createPane",
      this.host,
    );
    const runtime = pane.runtime ?? this.name;
    const hint = pane.attachHint === undefined ? undefined : this.attachVia === undefined ? pane.attachHint : this.viaSsh(pane.attachHint, runtime);
    return { paneId: pane.paneId, runtime, ...(hint !== undefined ? { attachHint: hint } : {}) };
  }

  /**
   * The hint as a line a person runs here. The host's text is never a part of this machine's shell
   * line: tmux's command goes to ssh as one quoted word, for the remote shell to read; herdr's hint
   * is words to follow there, after the ssh line. A hint with a control character is dropped.
   */
  private viaSsh(hint: string, runtime: RuntimeName): string | undefined {
    if (/[\u0000-\u001f\u007f-\u009f]/.test(hint)) return undefined;
    const via = this.attachVia!;
    const ssh = ["ssh", "-t", ...(via.sshOptions ?? []), "--", via.ssh];
    return runtime === "tmux" ? shellLine([...ssh, hint]) : `${shellLine(ssh)}, then there: ${hint}`;
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
