/**
 * A remote host's link without ssh or a process: the real AgentServer (its dispatch, its per-sheep
 * subscriptions, its batching of change events) serving an in-memory world's ports, reached through
 * the real proxies (remotePorts) over a RemoteCall that hands each JSON line across in this process.
 * Every line is counted, both ways, with its bytes: what a link carries per answer.
 */
import type { RemoteCall, RemoteEvent } from "../../src/remote/rpc/call.ts";
import { remotePorts } from "../../src/remote/rpc/ports.ts";
import { AgentServer } from "../../src/remote/server/serve.ts";
import type { RemotePorts } from "../../src/hosts/table.ts";
import { fromWireError } from "../../src/remote/rpc/wire-error.ts";
import type { MemoryWorld } from "./memory-world.ts";

export interface LinkCount {
  /** Requests sent, by method. */
  requests: Map<string, number>;
  /** Change events pushed. */
  events: number;
  /** Lines both ways (requests, answers, events) and their bytes. */
  lines: number;
  bytes: number;
}

export function newLinkCount(): LinkCount {
  return { requests: new Map(), events: 0, lines: 0, bytes: 0 };
}

class LoopbackCall implements RemoteCall {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly listeners = new Set<(e: RemoteEvent) => void>();
  readonly server: AgentServer;

  constructor(
    private readonly host: string,
    private readonly count: LinkCount,
  ) {
    this.server = new AgentServer({ write: (line) => this.fromAgent(line), side: undefined as never });
  }

  private tally(line: string): void {
    this.count.lines++;
    this.count.bytes += Buffer.byteLength(line);
  }

  call(method: string, params: unknown[]): Promise<unknown> {
    const id = this.nextId++;
    const line = JSON.stringify({ id, m: method, p: params });
    this.tally(line);
    this.count.requests.set(method, (this.count.requests.get(method) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.server.line(line);
    });
  }

  private fromAgent(line: string): void {
    this.tally(line);
    const m = JSON.parse(line) as { id?: number; ok?: unknown; err?: unknown; ev?: string; agentId?: string };
    if (m.ev === "change" && typeof m.agentId === "string") {
      this.count.events++;
      for (const cb of [...this.listeners]) cb({ ev: "change", agentId: m.agentId });
      return;
    }
    const p = typeof m.id === "number" ? this.pending.get(m.id) : undefined;
    if (!p) return;
    this.pending.delete(m.id!);
    if ("err" in m) p.reject(fromWireError(m.err, this.host));
    else p.resolve(m.ok);
  }

  onEvent(cb: (e: RemoteEvent) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  onReconnect(): () => void {
    return () => undefined;
  }
}

/** A host's ports over a loopback link to the AgentServer that serves `world` (as if init had been answered). */
export function loopbackHost(name: string, world: MemoryWorld, count: LinkCount): RemotePorts {
  const link = new LoopbackCall(name, count);
  // init's work (a real runtime, the files under a remote agent dir) is the one thing skipped: the world's ports stand in.
  Object.assign(link.server, { hosted: { runtime: world.runtime, host: world.files, workspace: undefined, egress: { closeAll: async () => undefined } } });
  const ports = remotePorts(link, { host: name, runtime: "tmux" });
  return {
    runtime: ports.runtime,
    files: ports.files,
    down: () => undefined,
    dir: async (p) => p ?? "/home/me",
    close: async () => {
      await link.server.end();
    },
  };
}
