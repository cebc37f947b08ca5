/**
 * The agent's answering: one request line in, one answer line out (in whatever order the calls
 * finish), change events pushed as a sheep's files change. Each method is routed through its
 * port's table (rpc/wire), whose entry checks what came before it is used; a line that breaks
 * the protocol is answered with protocol_error and the agent goes on.
 */
import { resolve } from "node:path";
import { homedir } from "node:os";
import { stat } from "node:fs/promises";
import { ShepherdError } from "../../domain/errors.ts";
import type { SheepFiles } from "../../ports/sheep-files.ts";
import { type InitAnswer, type InitParams, MAX_LINE_BYTES, type WireAnswer } from "../rpc/call.ts";
import { type AnyMethod, METHODS, type PortName, type Sides } from "../rpc/wire/table.ts";
import type { FilesSide } from "../rpc/wire/sheep-files.ts";
import { SYS_WIRE, type SysSide } from "../rpc/wire/sys.ts";
import type { TermSide } from "../rpc/wire/terminal.ts";
import { toWireError } from "../rpc/wire-error.ts";
import { type Hosted, type SheepSide, setUp } from "./setup.ts";
import { sysInfo } from "./sys-info.ts";
import { AgentWatches } from "./watches.ts";

export interface ServeOptions {
  /** Writes one line (a JSON object and its newline) to the shepherd. */
  write(line: string): void;
  side: SheepSide;
  /** Bytes written and not yet taken by the link (a terminal's output is not buffered past a bound); default none. */
  backlog?(): number;
}

export class AgentServer {
  private hosted: Hosted | undefined;
  private initing: Promise<Hosted> | undefined;
  private readonly subscriptions = new Map<string, () => void>();
  /** Agents whose change is to be told at the next turn of the loop: a burst of file events is one line. */
  private readonly dirty = new Set<string>();
  private flushing = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly watches: AgentWatches;

  constructor(private readonly o: ServeOptions) {
    this.watches = new AgentWatches(
      () => this.ready("term.watch").runtime,
      (line) => this.o.write(line),
      () => this.o.backlog?.() ?? 0,
    );
  }

  /** One line from the shepherd; never throws. */
  line(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.answer({ id: null, err: { code: "protocol_error", message: "a line that is not JSON was ignored" } });
      return;
    }
    const m = typeof msg === "object" && msg !== null && !Array.isArray(msg) ? (msg as Record<string, unknown>) : {};
    const id = m.id;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) {
      this.answer({ id: null, err: { code: "protocol_error", message: "a request needs a whole-number id" } });
      return;
    }
    const known = typeof m.m === "string" ? METHODS.get(m.m) : undefined;
    if (typeof m.m !== "string" || !known) {
      const name = typeof m.m === "string" ? JSON.stringify(m.m.slice(0, 60)) : "no method";
      this.answer({ id, err: { code: "protocol_error", message: `unknown method ${name}` } });
      return;
    }
    const params = m.p === undefined ? [] : m.p;
    if (!Array.isArray(params)) {
      this.answer({ id, err: { code: "protocol_error", message: `${m.m}: its parameters must be a list` } });
      return;
    }
    const run = this.dispatch(known.port, known.method, params).then(
      (ok) => this.answer(ok === undefined ? { id } : { id, ok }),
      (e) => this.answer({ id, err: toWireError(e) }),
    );
    this.inflight.add(run);
    void run.finally(() => this.inflight.delete(run)).catch(() => undefined);
  }

  /** A line over the protocol's limit was skipped. */
  overflow(): void {
    this.answer({ id: null, err: { code: "protocol_error", message: `a line over ${MAX_LINE_BYTES} bytes was skipped` } });
  }

  /** The shepherd is gone: watchers stop, and what is under way may finish; no pane's terminal is left watched. */
  async end(): Promise<void> {
    for (const off of this.subscriptions.values()) off();
    this.subscriptions.clear();
    await Promise.allSettled([...this.inflight]);
    await this.watches.endAll(this.hosted?.runtime);
    // Its sandboxed sheep lose their network until the next agent here serves their sockets again (at its subscribe).
    await this.hosted?.egress.closeAll();
  }

  private answer(a: WireAnswer): void {
    let line: string;
    try {
      line = JSON.stringify(a);
    } catch (e) {
      line = JSON.stringify({ id: a.id, err: { code: "remote_error", message: `the answer could not be written: ${(e as Error).message}` } });
    }
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
      line = JSON.stringify({ id: a.id, err: { code: "protocol_error", message: "the answer is over the protocol's line limit" } });
    }
    this.o.write(`${line}\n`);
  }

  private changed(agent: string): void {
    this.dirty.add(agent);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      const agents = [...this.dirty];
      this.dirty.clear();
      for (const a of agents) if (this.subscriptions.has(a)) this.o.write(`${JSON.stringify({ ev: "change", agentId: a })}\n`);
    });
  }

  private ready(method: string): Hosted {
    if (!this.hosted) throw new ShepherdError("protocol_error", `${method} before init: send init first.`);
    return this.hosted;
  }

  /** What init makes of its parameters; one far end serves one configuration. */
  private async init(params: InitParams): Promise<InitAnswer> {
    this.initing = setUp(params, this.o.side, (e) => this.o.write(`${JSON.stringify(e)}\n`));
    this.initing.catch(() => {
      this.initing = undefined;
    });
    this.hosted = await this.initing;
    return this.hosted.answer;
  }

  private readonly sys: SysSide = {
    init: (params) => this.init(params),
    dir: dirOnHost,
    info: (param) => sysInfo(param, this.hosted?.init),
  };

  /**
   * What a port's methods are served on, checked before their parameters are: the hosted ports
   * only after init, init only once.
   */
  private side<K extends PortName>(port: K, method: AnyMethod): Sides[K] {
    if (port === "sys") {
      if (method === SYS_WIRE.init && this.initing) throw new ShepherdError("protocol_error", "init was sent twice; one agent serves one configuration.");
      return this.sys as Sides[K];
    }
    const { runtime, host, workspace } = this.ready(method.name);
    if (port === "term") return this.watches as TermSide as Sides[K];
    return (port === "runtime" ? runtime : port === "ws" ? workspace : this.hostSide(host)) as Sides[K];
  }

  /** The sheep-files port's methods are served on it and on this end's subscriptions: one watcher per sheep, its changes pushed. */
  private hostSide(host: SheepFiles): FilesSide {
    return {
      files: host,
      subscribe: (id) => {
        if (!this.subscriptions.has(id))
          this.subscriptions.set(
            id,
            host.subscribe(id, () => this.changed(id)),
          );
      },
      unsubscribe: (id) => {
        this.subscriptions.get(id)?.();
        this.subscriptions.delete(id);
      },
    };
  }

  private async dispatch(port: PortName, method: AnyMethod, p: unknown[]): Promise<unknown> {
    const side = this.side(port, method);
    return method.serve(side, ...method.params(p));
  }
}

/** An absolute, existing directory on this host: the path asked for (relative ones and `~/` from the home), or the home. */
async function dirOnHost(wanted: string | undefined): Promise<string> {
  // "~" and "~/x" as a person writes them for that host: its home, not a directory named "~".
  const given = wanted?.replace(/^~(?=\/|$)/, homedir());
  const path = given === undefined ? homedir() : resolve(homedir(), given);
  try {
    if ((await stat(path)).isDirectory()) return path;
  } catch {
    // said below
  }
  throw new ShepherdError("cwd_invalid", `cwd "${String(wanted ?? path).slice(0, 300)}" is not an existing directory on this host.`);
}
