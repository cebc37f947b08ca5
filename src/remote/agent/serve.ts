/**
 * The agent's answering: one request line in, one answer line out (in whatever order the calls
 * finish), change events pushed as a sheep's files change. What comes in is checked before it
 * is used; a line that breaks the protocol is answered with protocol_error and the agent goes on.
 */
import { resolve } from "node:path";
import { homedir } from "node:os";
import { stat } from "node:fs/promises";
import { ShepherdError } from "../../domain/errors.ts";
import { isWellFormedId } from "../../domain/ids.ts";
import type { PaneRef } from "../../ports/runtime.ts";
import { MAX_LINE_BYTES, METHODS, type Method, type WireAnswer } from "../rpc/call.ts";
import { toWireError } from "../rpc/wire-error.ts";
import { checkInit, type Hosted, type SheepSide, setUp } from "./setup.ts";
import { sysInfo } from "./sys-info.ts";

export interface ServeOptions {
  /** Writes one line (a JSON object and its newline) to the shepherd. */
  write(line: string): void;
  side: SheepSide;
}

const KNOWN: ReadonlySet<string> = new Set(METHODS);

const fail = (what: string) => new ShepherdError("invalid_params", what);

function arg<T>(p: unknown[], i: number, kind: "string" | "number" | "object", method: string): T {
  const v = p[i];
  const ok = kind === "object" ? typeof v === "object" && v !== null && !Array.isArray(v) : typeof v === kind;
  if (!ok) throw fail(`${method}: parameter ${i + 1} must be ${kind === "object" ? "an object" : `a ${kind}`}.`);
  return v as T;
}

function agentId(p: unknown[], i: number, method: string): string {
  const id = arg<string>(p, i, "string", method);
  if (!isWellFormedId(id, "agent")) throw fail(`${method}: "${id.slice(0, 40)}" is no agent id.`);
  return id;
}

/** A pane as it travels: `{paneId, agentId}` (agentId empty where the port's call names none). */
function paneRef(p: unknown[], i: number, method: string): PaneRef {
  const v = arg<Record<string, unknown>>(p, i, "object", method);
  if (typeof v.paneId !== "string" || typeof v.agentId !== "string") throw fail(`${method}: parameter ${i + 1} must be a pane {paneId, agentId}.`);
  return { paneId: v.paneId, agentId: v.agentId };
}

export class AgentServer {
  private hosted: Hosted | undefined;
  private initing: Promise<Hosted> | undefined;
  private readonly subscriptions = new Map<string, () => void>();
  /** Agents whose change is to be told at the next turn of the loop: a burst of file events is one line. */
  private readonly dirty = new Set<string>();
  private flushing = false;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(private readonly o: ServeOptions) {}

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
    if (typeof m.m !== "string" || !KNOWN.has(m.m)) {
      const name = typeof m.m === "string" ? JSON.stringify(m.m.slice(0, 60)) : "no method";
      this.answer({ id, err: { code: "protocol_error", message: `unknown method ${name}` } });
      return;
    }
    const params = m.p === undefined ? [] : m.p;
    if (!Array.isArray(params)) {
      this.answer({ id, err: { code: "protocol_error", message: `${m.m}: its parameters must be a list` } });
      return;
    }
    const run = this.dispatch(m.m as Method, params).then(
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

  /** The shepherd is gone: watchers stop, and what is under way may finish. */
  async end(): Promise<void> {
    for (const off of this.subscriptions.values()) off();
    this.subscriptions.clear();
    await Promise.allSettled([...this.inflight]);
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

  private async dispatch(method: Method, p: unknown[]): Promise<unknown> {
    if (method === "init") {
      if (this.initing) throw new ShepherdError("protocol_error", "init was sent twice; one agent serves one configuration.");
      const init = checkInit(p[0]);
      this.initing = setUp(init, this.o.side);
      this.initing.catch(() => {
        this.initing = undefined;
      });
      this.hosted = await this.initing;
      return this.hosted.answer;
    }
    if (method === "sys.dir") return dirOnHost(p[0]);
    if (method === "sys.info") return sysInfo(p[0], this.hosted?.init);
    const { runtime, host, workspace: ws } = this.ready(method);
    switch (method) {
      case "runtime.createPane":
        return { runtime: runtime.name, ...(await runtime.createPane(arg(p, 0, "object", method))) };
      case "runtime.liveness": {
        if (!Array.isArray(p[0])) throw fail(`${method}: parameter 1 must be a list of panes.`);
        const panes = (p[0] as unknown[]).map((_, i) => paneRef(p[0] as unknown[], i, method));
        return [...(await runtime.liveness(panes)).entries()];
      }
      case "runtime.markedPanes":
        return runtime.markedPanes();
      case "runtime.read":
        return runtime.read(paneRef(p, 0, method).paneId, arg(p, 1, "number", method));
      case "runtime.close":
        return runtime.close(arg(p, 0, "string", method), arg(p, 1, "string", method));
      case "runtime.relabel":
        return runtime.relabel?.(paneRef(p, 0, method), arg(p, 1, "string", method), arg(p, 2, "string", method));
      case "runtime.agentStatus":
        return runtime.agentStatus?.(paneRef(p, 0, method).paneId);
      case "host.prepare":
        return host.prepare(arg(p, 0, "object", method));
      case "host.snapshot":
        return host.snapshot(agentId(p, 0, method));
      case "host.result":
        return host.result(agentId(p, 0, method), arg(p, 1, "string", method));
      case "host.submit":
        return host.submit(agentId(p, 0, method), arg(p, 1, "object", method));
      case "host.messages":
        return host.messages(agentId(p, 0, method));
      case "host.replies":
        return [...(await host.replies(agentId(p, 0, method))).entries()];
      case "host.replyText":
        return host.replyText?.(agentId(p, 0, method), arg(p, 1, "string", method));
      case "host.reply":
        return host.reply(agentId(p, 0, method), arg(p, 1, "string", method), arg(p, 2, "string", method));
      case "host.subscribe": {
        const id = agentId(p, 0, method);
        // Idempotent: a reconnecting session and the proxies may both subscribe again.
        if (!this.subscriptions.has(id))
          this.subscriptions.set(
            id,
            host.subscribe(id, () => this.changed(id)),
          );
        return undefined;
      }
      case "host.unsubscribe": {
        const id = agentId(p, 0, method);
        this.subscriptions.get(id)?.();
        this.subscriptions.delete(id);
        return undefined;
      }
      case "host.evidencePath":
        return host.evidencePath(agentId(p, 0, method), arg(p, 1, "string", method));
      case "host.cleanup":
        return host.cleanup(agentId(p, 0, method));
      case "host.relabel":
        return host.relabel(agentId(p, 0, method), arg(p, 1, "string", method));
      case "host.staleSpecs":
        return host.staleSpecs(arg(p, 0, "number", method));
      case "host.discard":
        return host.discard(agentId(p, 0, method));
      case "host.renewed":
        return host.renewed(agentId(p, 0, method), arg(p, 1, "string", method));
      case "host.residentKb":
        return host.residentKb(agentId(p, 0, method));
      case "host.resumeCard":
        return host.resumeCard(agentId(p, 0, method));
      case "host.resumeCards":
        return host.resumeCards();
      case "host.conversation":
        return host.conversation(agentId(p, 0, method), arg(p, 1, "number", method));
      case "ws.baseline":
        return ws.baseline(arg(p, 0, "string", method));
      case "ws.diff":
        return ws.diff(arg(p, 0, "object", method), arg(p, 1, "object", method));
      case "ws.isolate":
        return ws.isolate(arg(p, 0, "object", method));
      case "ws.inspect":
        return ws.inspect(arg(p, 0, "object", method));
      case "ws.remove":
        return ws.remove(arg(p, 0, "object", method));
      case "ws.land":
        return ws.land(arg(p, 0, "object", method), arg(p, 1, "object", method));
      case "ws.sync":
        return ws.sync(arg(p, 0, "object", method), arg(p, 1, "object", method));
      case "ws.conflicts":
        return ws.conflicts(arg(p, 0, "object", method));
    }
  }
}

/** An absolute, existing directory on this host: the path asked for (relative ones and `~/` from the home), or the home. */
async function dirOnHost(wanted: unknown): Promise<string> {
  if (wanted !== null && wanted !== undefined && typeof wanted !== "string") throw fail("sys.dir: its parameter must be a path or null.");
  // "~" and "~/x" as a person writes them for that host: its home, not a directory named "~".
  const given = typeof wanted === "string" ? wanted.replace(/^~(?=\/|$)/, homedir()) : undefined;
  const path = given === undefined ? homedir() : resolve(homedir(), given);
  try {
    if ((await stat(path)).isDirectory()) return path;
  } catch {
    // said below
  }
  throw new ShepherdError("cwd_invalid", `cwd "${String(wanted ?? path).slice(0, 300)}" is not an existing directory on this host.`);
}
