/**
 * The shepherd's end of one agent channel: requests with ids out, answers matched back, events
 * handed on. It never reconnects (src/remote/link does, around it): when the stream ends every
 * pending call and every later one fails with [host_unreachable].
 */
import type { Readable, Writable } from "node:stream";
import { ShepherdError, shorten } from "../../domain/errors.ts";
import { type Hello, PROTOCOL_VERSION, type RemoteCall, type RemoteEvent } from "./call.ts";
import { egressRefusalOf } from "./egress-event.ts";
import { termEventOf } from "./terminal-event.ts";
import { CallLost } from "./lost-call.ts";
import { LineSplitter } from "./lines.ts";
import { fromWireError } from "./wire-error.ts";

export interface RpcClientOptions {
  /** The agent's stdout. */
  input: Readable;
  /** The agent's stdin. */
  output: Writable;
  /** The host's name, for the words of errors. */
  host: string;
  /** Said after the reason when the stream is gone (e.g. "it reconnects by itself"); a default next step otherwise. */
  unreachableFix?: string;
  /** A call's deadline by its method; default callDeadlineMs. */
  deadlineMs?: (method: string) => number;
  /** Told when a call passed its deadline unanswered: the agent there is taken for hung. */
  onSilent?: (method: string) => void;
}

/** Calls that run git or make a pane may take a while there; every other is a quick look. */
const SLOW = /^(ws\.|host\.prepare$|host\.conversation$|host\.resumeCards$|runtime\.createPane$|init$)/;

/** How long a call waits for its answer before it fails as lost (it may have been done there). */
export function callDeadlineMs(method: string): number {
  return SLOW.test(method) ? 120_000 : 20_000;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export class RpcClient implements RemoteCall {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly events = new Set<(e: RemoteEvent) => void>();
  private readonly closeListeners = new Set<(reason: string) => void>();
  private readonly splitter = new LineSplitter();
  private closedReason: string | undefined;
  private helloResolve!: (h: Hello) => void;
  private helloReject!: (e: Error) => void;
  /** The agent's first line; rejects when the stream ends before it or it speaks another protocol. */
  readonly hello: Promise<Hello>;

  constructor(private readonly o: RpcClientOptions) {
    this.hello = new Promise<Hello>((resolve, reject) => {
      this.helloResolve = resolve;
      this.helloReject = reject;
    });
    this.hello.catch(() => undefined);
    o.input.on("data", (chunk: Buffer | string) => this.onData(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    o.input.on("end", () => this.fail("the agent's output ended"));
    o.input.on("close", () => this.fail("the agent's output closed"));
    o.input.on("error", (e) => this.fail(`reading from the agent failed: ${e.message}`));
    o.output.on("error", (e) => this.fail(`writing to the agent failed: ${e.message}`));
    o.output.on("close", () => this.fail("the agent's input closed"));
  }

  get closed(): string | undefined {
    return this.closedReason;
  }

  /** Told once, with the reason, when the stream is gone. */
  onClose(cb: (reason: string) => void): () => void {
    if (this.closedReason !== undefined) {
      cb(this.closedReason);
      return () => undefined;
    }
    this.closeListeners.add(cb);
    return () => this.closeListeners.delete(cb);
  }

  call(method: string, params: unknown[]): Promise<unknown> {
    if (this.closedReason !== undefined) return Promise.reject(this.unreachable());
    const id = this.nextId++;
    let line: string;
    try {
      line = `${JSON.stringify({ id, m: method, p: params })}\n`;
    } catch (e) {
      return Promise.reject(new ShepherdError("invalid_params", `${method}: its parameters cannot be sent (${(e as Error).message}).`));
    }
    const ms = this.o.deadlineMs?.(method) ?? callDeadlineMs(method);
    return new Promise((resolve, reject) => {
      // Every call has a deadline: an agent stopped with its connection up answers nothing, ever.
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        reject(new CallLost(`host "${this.o.host}" did not answer ${method} within ${ms / 1000} s: it may have been done there.`));
        this.o.onSilent?.(method);
      }, ms);
      const done = () => clearTimeout(timer);
      this.pending.set(id, {
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      this.o.output.write(line);
    });
  }

  onEvent(cb: (event: RemoteEvent) => void): () => void {
    this.events.add(cb);
    return () => this.events.delete(cb);
  }

  /** This channel's one end: told as onClose tells it. */
  onDown(cb: (reason: string) => void): () => void {
    return this.onClose(cb);
  }

  /** One channel never comes back: a reconnecting RemoteCall wraps this one. */
  onReconnect(_cb: () => void): () => void {
    return () => undefined;
  }

  /** Ends the agent's input (it exits when its stdin ends); pending calls fail. */
  close(why = "the channel was closed by the shepherd"): void {
    this.fail(why);
    this.o.output.end();
  }

  private onData(chunk: Buffer): void {
    for (const ev of this.splitter.push(chunk)) {
      if ("overflow" in ev) {
        this.fail("the agent sent a line over the protocol's limit");
        this.o.output.end();
        return;
      }
      this.onLine(ev.line);
    }
  }

  private onLine(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // what a remote shell's start-up files may print around the agent is no answer
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return;
    const m = msg as Record<string, unknown>;
    if ("hello" in m) {
      this.onHello(m.hello);
      return;
    }
    if (m.ev === "change" && typeof m.agentId === "string") {
      const event: RemoteEvent = { ev: "change", agentId: m.agentId };
      for (const cb of [...this.events]) cb(event);
      return;
    }
    if (m.ev === "egress-refusal") {
      const event = egressRefusalOf(m);
      if (event) for (const cb of [...this.events]) cb(event);
      return;
    }
    if (m.ev === "term-output" || m.ev === "term-end") {
      const event = termEventOf(m);
      if (event) for (const cb of [...this.events]) cb(event);
      return;
    }
    if (typeof m.id !== "number") return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ("err" in m) p.reject(fromWireError(m.err, this.o.host));
    else p.resolve(m.ok);
  }

  private onHello(h: unknown): void {
    const o = typeof h === "object" && h !== null ? (h as Record<string, unknown>) : {};
    if (o.protocol !== PROTOCOL_VERSION) {
      const why = `the agent speaks protocol ${shorten(JSON.stringify(o.protocol ?? null), 40)}, this shepherd ${PROTOCOL_VERSION}`;
      this.helloReject(new ShepherdError("protocol_error", `host "${this.o.host}": ${why}; deploy this shepherd's bundle there.`));
      this.fail(why);
      this.o.output.end();
      return;
    }
    this.helloResolve({
      protocol: PROTOCOL_VERSION,
      bundle: typeof o.bundle === "string" ? shorten(o.bundle, 80) : "",
      pid: typeof o.pid === "number" ? o.pid : 0,
      node: typeof o.node === "string" ? shorten(o.node, 40) : "",
    });
  }

  private unreachable(): ShepherdError {
    const fix = this.o.unreachableFix ?? "nothing was done there; check the host (action doctor) and try again.";
    return new ShepherdError("host_unreachable", `host "${this.o.host}" unreachable: ${this.closedReason}. ${fix}`);
  }

  private fail(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    const err = this.unreachable();
    this.helloReject(err);
    const pending = [...this.pending.values()];
    this.pending.clear();
    // What was on its way may have been done there: "nothing was done" is only true of what comes after.
    const lost = new CallLost(`host "${this.o.host}" unreachable: ${reason}, while the call was on its way: it may have been done there.`);
    for (const p of pending) p.reject(lost);
    for (const cb of [...this.closeListeners]) cb(reason);
    this.closeListeners.clear();
  }
}
