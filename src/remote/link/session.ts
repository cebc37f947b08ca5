/**
 * RemoteSession: the one connection to one host, as the proxies see it (a RemoteCall). It holds
 * the host's ControlMaster, puts the bundle there (deploy.ts), runs the agent over ONE channel
 * through the master, and sends `init` over that channel's stdin: the sheep's variables (provider
 * keys among them) are never on a command line, here or there.
 *
 * When the channel ends (the link dropped, the master was killed, sshd went away) the session is
 * down: every call fails at once with [host_unreachable] (since when, ssh's reason, the fix),
 * never queued; it reconnects by itself with backoff (0.25 s doubling to 15 s), initialises the
 * new agent, subscribes again to what was subscribed, and only then tells onReconnect (so every
 * waiter looks again). close() ends the channel, the master and its socket.
 */
import { dirname } from "node:path";
import { execa } from "execa";
import { isShepherdError, ShepherdError } from "../../domain/errors.ts";
import type { InitAnswer, InitParams, RemoteCall, RemoteEvent } from "../rpc/call.ts";
import { CallLost } from "../rpc/lost-call.ts";
import { RpcClient } from "../rpc/client.ts";
import { expect } from "../rpc/shape.ts";
import { SYS_WIRE } from "../rpc/wire/sys.ts";
import { controlSocketPath } from "./control-dir.ts";
import { type DeployBundle, type Deployed, deployBundle, type RemoteExec } from "./deploy.ts";
import { ControlMaster, endDeadMasters, MasterFailed } from "./master.ts";
import { remoteLine } from "./quote.ts";
import { downReason, lasting, sshReason, unreachable } from "./reasons.ts";
import { defaultsFor, effectiveConfig, type SshTarget } from "./ssh-options.ts";

export interface RemoteHost extends SshTarget {
  /** The node that runs the agent there; default "node". */
  node?: string;
  /** pi's agent dir there; default the remote user's ~/.pi/agent. */
  agentDir?: string;
}

export interface RemoteSessionOptions {
  host: RemoteHost;
  /** The local state dir: the control socket goes in its ssh/ (or a short dir of ours when its path is too long). */
  localStateDir: string;
  /** The files the remote needs (src/remote/bundle.ts). */
  bundle(): Promise<DeployBundle>;
  /** init's parameters for an agent that runs from `deployed` (agentDir as the remote resolved it). */
  init(deployed: Deployed): InitParams | Promise<InitParams>;
  /** The environment of every ssh (the person's SSH_AUTH_SOCK among it); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The first wait before a reconnect, doubled up to maxMs; back to firstMs after a connection that held stableMs (default 10 s). */
  backoff?: { firstMs: number; maxMs: number; stableMs?: number };
  /** Where the short socket dir goes when the state dir's path is too long; default /tmp. */
  tmpDir?: string;
  /** How long the master outlives its last channel (after a crash of this process); default MASTER_IDLE_S. */
  masterIdleSeconds?: number;
}

export type LinkState =
  | { status: "connecting" }
  | { status: "up"; since: Date; masterPid: number; agentPid: number }
  /** retryInMs: the wait before the next try in the background (none for a reason only the person can fix). */
  | { status: "down"; since: Date; reason: string; retryInMs?: number }
  | { status: "closed" };

/** How long a started agent may take to say hello, and to answer init: an attempt never hangs (the next one would never come). */
/** How often calls may try again a host that is down for a reason only the person can fix. */
const LASTING_RETRY_MS = 30_000;
/** A connection up this long before it fell starts the backoff over. */
const STABLE_MS = 10_000;
const HELLO_MS = 30_000;
const CALL_MS = 60_000;
/** A remote command through the master (a deploy carries the bundle, a few MB, over a slow link maybe). */
const EXEC_MS = 300_000;

export class RemoteSession implements RemoteCall {
  private st: LinkState = { status: "connecting" };
  private master: ControlMaster | undefined;
  private client: RpcClient | undefined;
  private channel: Channel | undefined;
  private first: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerWait = 0;
  private delay: number;
  /** The wait before the first reconnect, and again after a connection that held. */
  private readonly firstDelayMs: number;
  private attempting = false;
  private readonly subscribed = new Set<string>();
  private readonly events = new Set<(e: RemoteEvent) => void>();
  private readonly reconnects = new Set<() => void>();
  private readonly states = new Set<(s: LinkState) => void>();
  private everUp = false;
  private everDown = false;
  /** The last attempt failed for a reason no retry changes (lasting()): nothing retries in the background. */
  private lastingDown = false;
  private lastAttemptAt = 0;
  private answer: InitAnswer | undefined;

  constructor(private readonly o: RemoteSessionOptions) {
    this.firstDelayMs = o.backoff?.firstMs ?? 250;
    this.delay = this.firstDelayMs;
  }

  get name(): string {
    return this.o.host.name;
  }

  state(): LinkState {
    return this.st;
  }

  /** What the agent's latest init answered (its runtime, state dir, the remote home); undefined before the first. */
  initAnswer(): InitAnswer | undefined {
    return this.answer;
  }

  /** Told every change of state (up, down, closed). */
  onState(cb: (s: LinkState) => void): () => void {
    this.states.add(cb);
    return () => this.states.delete(cb);
  }

  /** The first connection: resolves when up, rejects with [host_unreachable] (and goes on trying in the background). */
  connect(): Promise<void> {
    this.first ??= this.attempt().then(() => {
      if (this.st.status !== "up") throw this.downError();
    });
    return this.first;
  }

  async call(method: string, params: unknown[]): Promise<unknown> {
    const id = typeof params[0] === "string" ? params[0] : undefined;
    // Let go is let go at once, up or down: a reconnect must not subscribe it again.
    if (method === "files.unsubscribe" && id !== undefined) this.subscribed.delete(id);
    try {
      const v = await this.callNow(method, params);
      if (method === "files.subscribe" && id !== undefined) this.subscribed.add(id);
      return v;
    } catch (e) {
      // Asked while the host is down: the subscription is wanted, and the connection that comes up makes it.
      if (method === "files.subscribe" && id !== undefined && isShepherdError(e, "host_unreachable") && !this.closed()) this.subscribed.add(id);
      throw e;
    }
  }

  private async callNow(method: string, params: unknown[]): Promise<unknown> {
    if (this.st.status === "connecting") await this.connect();
    // Down for a reason only the person can fix: a call tries again, at most once in LASTING_RETRY_MS.
    if (this.st.status === "down" && this.lastingDown && Date.now() - this.lastAttemptAt >= LASTING_RETRY_MS) await this.attempt();
    const client = this.client;
    if (this.st.status !== "up" || !client) throw this.downError();
    try {
      return await client.call(method, params);
    } catch (e) {
      // The channel went while the call was out: say it as the session says it, with since and
      // why, and that it may have been done there.
      if (e instanceof CallLost && this.st.status !== "up") {
        const down = this.downError().message.replace(/^\[host_unreachable\] /, "");
        throw new CallLost(`${down} The call was on its way when the connection went: it may have been done there.`);
      }
      if (isShepherdError(e, "host_unreachable") && this.st.status !== "up") throw this.downError();
      throw e;
    }
  }

  onEvent(cb: (event: RemoteEvent) => void): () => void {
    this.events.add(cb);
    return () => this.events.delete(cb);
  }

  onReconnect(cb: () => void): () => void {
    this.reconnects.add(cb);
    return () => this.reconnects.delete(cb);
  }

  /** Told when an agent channel that was up goes (down or closed): what that agent held there is gone. */
  onDown(cb: (reason: string) => void): () => void {
    return this.onState((s) => {
      if (s.status === "down") cb(s.reason);
      else if (s.status === "closed") cb("its connection was closed by this shepherd");
    });
  }

  /** Runs one remote command line through the master (a channel of its own, ended when it is). */
  exec: RemoteExec = async (line, stdin) => {
    const master = await this.ensureMaster();
    return await runChannel(master.channelArgv(line), stdin, this.o.env);
  };

  /** Ends the agent's channel, the master and its socket; nothing of this session is left. */
  async close(): Promise<void> {
    this.setState({ status: "closed" });
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.endChannel();
    if (this.master) await this.master.exit();
  }

  private closed(): boolean {
    return this.st.status === "closed";
  }

  /** A step of a connection on its way ends here once close() has come. */
  private stillOpen(): void {
    if (this.closed()) throw new Error("closed");
  }

  private downError(): ShepherdError {
    if (this.st.status === "closed")
      return new ShepherdError("host_unreachable", `host "${this.name}": its connection was closed by this shepherd. Start again (a new call connects anew).`);
    const since = this.st.status === "down" ? this.st.since : new Date();
    const reason = this.st.status === "down" ? this.st.reason : "not connected";
    return unreachable(this.name, this.o.host.ssh, since, reason);
  }

  private setState(s: LinkState): void {
    if (this.st.status === "closed") return;
    this.st = s;
    for (const cb of [...this.states]) cb(s);
  }

  private down(why: string): void {
    if (this.st.status === "closed") return;
    const reason = downReason(why);
    this.everDown = true;
    // since stays the moment it first went down; the reason is the latest attempt's.
    const since = this.st.status === "down" ? this.st.since : new Date();
    this.lastingDown = lasting(reason);
    // A host key to check or a key not accepted: a connection every 15 s would change nothing.
    const retryInMs = this.lastingDown ? undefined : this.schedule();
    this.setState({ status: "down", since, reason, ...(retryInMs !== undefined ? { retryInMs } : {}) });
  }

  /** Plans the next try (unless one is planned or on its way); returns its wait. */
  private schedule(): number | undefined {
    if (this.timer) return this.timerWait;
    if (this.attempting || this.st.status === "closed") return undefined;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.o.backoff?.maxMs ?? 15_000);
    this.timerWait = wait;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.attempt();
    }, wait);
    this.timer.unref?.();
    return wait;
  }

  private async ensureMaster(): Promise<ControlMaster> {
    // A closed session starts no master: close() may have come while a step was on its way.
    this.stillOpen();
    if (!this.master) {
      const [socket, effective] = await Promise.all([
        controlSocketPath(this.o.localStateDir, this.name, this.o.tmpDir),
        effectiveConfig(this.o.host, this.o.env),
      ]);
      this.stillOpen();
      if (!this.master) {
        this.master = new ControlMaster(this.o.host, socket, defaultsFor(effective), this.o.env, this.o.masterIdleSeconds);
        // Before ours starts: a crashed shepherd's master to this host ends now, not at its idle timeout.
        await endDeadMasters(dirname(socket), this.o.host, this.o.env);
      }
    }
    await this.master.ensure();
    return this.master;
  }

  /** One try at being up; never throws (a failure is the state down, and the next try scheduled). */
  private async attempt(): Promise<void> {
    if (this.attempting || this.st.status === "closed") return;
    this.attempting = true;
    this.lastAttemptAt = Date.now();
    // A close() while this runs does not wait for it: each step looks, and what it made is ended here.
    try {
      const master = await this.ensureMaster();
      this.stillOpen();
      const bundle = await this.o.bundle();
      this.stillOpen();
      const deployed = await deployBundle(this.exec, {
        node: this.o.host.node ?? "node",
        ...(this.o.host.agentDir ? { agentDir: this.o.host.agentDir } : {}),
        bundle,
      });
      this.stillOpen();
      await this.startAgent(master, deployed, bundle.hash);
    } catch (e) {
      this.attempting = false;
      await this.endChannel();
      if (this.closed()) await this.master?.exit();
      this.down(e instanceof MasterFailed ? e.reason : e instanceof Error ? e.message.replace(/^\[[a-z_]+\]\s*/, "") : String(e));
      return;
    }
    this.attempting = false;
    // Fallen again before this try was over (no next try could be planned while it ran): plan it now.
    if (this.st.status === "down" && !this.lastingDown && !this.timer) this.down(this.st.reason);
  }

  private async startAgent(master: ControlMaster, deployed: Deployed, hash: string): Promise<void> {
    const argv = master.channelArgv(remoteLine([this.o.host.node ?? "node", `${deployed.dir}/agent.mjs`]));
    const child = openChannel(argv, this.o.env);
    this.channel = child;
    this.stillOpen();
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString("utf8")).slice(-4000);
    });
    const client = new RpcClient({
      input: child.stdout!,
      output: child.stdin!,
      host: this.name,
      unreachableFix: "it reconnects by itself; nothing was done there",
      // An agent that let a call pass its deadline (stopped, its connection up) is hung: the
      // channel ends and a new agent is started there, as after a drop.
      onSilent: (method) => {
        if (this.client === client) client.close(`the agent there did not answer ${method} in time`);
      },
    });
    const hello = await withTimeout(client.hello, HELLO_MS, "the remote agent did not start (no hello)").catch((e) => {
      throw new Error(stderr.trim() ? sshReason(stderr) : (e as Error).message);
    });
    if (hello.bundle !== hash) throw new Error(`the remote agent runs bundle ${hello.bundle}, not ${hash}`);
    // Before init and the subscriptions: a renewed subscription's first change must not be missed.
    client.onEvent((ev) => {
      for (const cb of [...this.events]) cb(ev);
    });
    const params = await this.o.init(deployed);
    const answer = expect<InitAnswer>(
      await withTimeout(client.call(SYS_WIRE.init.name, [params]), CALL_MS, "the remote agent did not answer init"),
      (v) => SYS_WIRE.init.answer(v, [params]),
      SYS_WIRE.init.name,
      this.name,
    );
    for (const id of [...this.subscribed]) {
      // One the agent refuses (it was asked for while the host was down, so never checked there) is let go, not the connection.
      await withTimeout(client.call("files.subscribe", [id]), CALL_MS, "the remote agent did not answer files.subscribe").catch((e: unknown) => {
        if (isShepherdError(e, "host_unreachable") || (e instanceof Error && /did not answer/.test(e.message))) throw e;
        this.subscribed.delete(id);
      });
    }
    const masterPid = (await master.pid()) ?? 0;
    this.stillOpen();
    // An agent that ended already (it died right after init) is no connection: down, not up.
    if (client.closed !== undefined) throw new Error(stderr.trim() ? sshReason(stderr) : `the remote agent ended right after init (${client.closed})`);
    this.answer = answer;
    this.client = client;
    const upAt = Date.now();
    client.onClose((why) => {
      if (this.client !== client) return;
      this.client = undefined;
      if (this.channel === child) this.channel = undefined;
      // Only a connection that held is a fresh start: one that falls at once (an agent that dies
      // right after init) goes on waiting longer each time, not every quarter second.
      if (Date.now() - upAt >= (this.o.backoff?.stableMs ?? STABLE_MS)) this.delay = this.firstDelayMs;
      this.down(stderr.trim() ? sshReason(stderr) : why);
      const st = this.st;
      // ssh's last words say more than "the stream ended"; they come as it exits, which it must (bounded).
      void exitedWithin(child, 2_000).then((gone) => {
        if (!gone) child.kill("SIGKILL");
        if (this.st === st && st.status === "down" && stderr.trim()) st.reason = sshReason(stderr);
      });
    });
    // Up again after being down, or up at last after a first connection that failed: what changed
    // meanwhile was told to nobody, so the listeners look (and a first success counts too).
    const again = this.everUp || this.everDown;
    this.everUp = true;
    this.setState({ status: "up", since: new Date(), masterPid, agentPid: hello.pid });
    if (again) for (const cb of [...this.reconnects]) cb();
  }

  private async endChannel(): Promise<void> {
    const client = this.client;
    const child = this.channel;
    this.client = undefined;
    this.channel = undefined;
    client?.close();
    if (!child) return;
    child.stdin?.end();
    if (!(await exitedWithin(child, 5_000))) {
      child.kill("SIGTERM");
      await exited(child);
    }
  }
}

/** The agent's channel: ssh through the master, its stdio ours, nothing buffered. */
function openChannel(argv: string[], env: NodeJS.ProcessEnv | undefined) {
  return execa("ssh", argv, { stdin: "pipe", stdout: "pipe", stderr: "pipe", buffer: false, reject: false, env: env ?? process.env, extendEnv: false });
}
type Channel = ReturnType<typeof openChannel>;

const envOf = (env: NodeJS.ProcessEnv | undefined) => (env ? { env, extendEnv: false } : {});

async function exited(child: Channel): Promise<void> {
  await child;
}

async function exitedWithin(child: Channel, ms: number): Promise<boolean> {
  let t: NodeJS.Timeout | undefined;
  const r = await Promise.race([exited(child).then(() => true), new Promise<boolean>((res) => (t = setTimeout(() => res(false), ms)))]);
  clearTimeout(t);
  return r;
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(what)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

/** One channel through the master: the command's stdout, stderr and code (255 with nothing said: ssh's own failure). */
async function runChannel(argv: string[], stdin: string, env?: NodeJS.ProcessEnv): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await execa("ssh", argv, { input: stdin, reject: false, timeout: EXEC_MS, ...envOf(env) });
  const out = { exitCode: r.exitCode ?? 255, stdout: String(r.stdout), stderr: String(r.stderr) };
  if (r.timedOut) throw new MasterFailed(`a remote command did not end within ${EXEC_MS / 1000} s`);
  if (out.exitCode === 255 && !out.stdout.trim()) throw new MasterFailed(sshReason(out.stderr));
  return out;
}
