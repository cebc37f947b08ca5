/**
 * One OpenSSH ControlMaster per host: the one connection (and the one sshd session) every
 * channel to that host goes through. The master backgrounds itself once authenticated
 * (ControlPersist), so "up" is the starting ssh's exit 0 and a failure is its exit 255 with ssh's
 * reason on stderr; it outlives its last channel by MASTER_IDLE_S only, so a crashed shepherd
 * leaves no connection for good.
 */
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { sshReason } from "./reasons.ts";
import { type SshTarget, sshArgv } from "./ssh-options.ts";

export class MasterFailed extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export class ControlMaster {
  constructor(
    readonly target: SshTarget,
    readonly socket: string,
    private readonly defaults: readonly string[],
    private readonly env?: NodeJS.ProcessEnv,
    private readonly idleSeconds?: number,
  ) {}

  private opts(timeout: number) {
    return { reject: false, stdin: "ignore" as const, timeout, ...(this.env ? { env: this.env, extendEnv: false } : {}) };
  }

  /** The master's pid when one answers on the socket. */
  async pid(): Promise<number | undefined> {
    const r = await execa("ssh", sshArgv(this.target, this.socket, [], { kind: "control", op: "check" }), this.opts(10_000));
    const m = /pid=(\d+)/.exec(String(r.stderr));
    return r.exitCode === 0 && m ? Number(m[1]) : undefined;
  }

  /** A master answering on the socket, started when none does; throws MasterFailed with ssh's reason. */
  async ensure(): Promise<number> {
    const running = await this.pid();
    if (running !== undefined) return running;
    // A socket file left by a killed master would make ssh run without multiplexing ("already exists").
    await unlink(this.socket).catch(() => undefined);
    const r = await execa(
      "ssh",
      sshArgv(this.target, this.socket, this.defaults, { kind: "master", ...(this.idleSeconds === undefined ? {} : { idleSeconds: this.idleSeconds }) }),
      this.opts(120_000),
    );
    if (r.exitCode !== 0) throw new MasterFailed(sshReason(r.timedOut ? "the connection attempt timed out" : String(r.stderr)));
    const pid = await this.pid();
    if (pid === undefined) throw new MasterFailed("the master connection ended right after it was made");
    return pid;
  }

  /** Argv of a channel through the master running one remote command line. */
  channelArgv(command: string): string[] {
    return sshArgv(this.target, this.socket, this.defaults, { kind: "channel", command });
  }

  /** Ends the master (`ssh -O exit`, then its pid) and its socket; what ran through it ends with it. */
  async exit(): Promise<void> {
    const pid = await this.pid();
    await execa("ssh", sshArgv(this.target, this.socket, [], { kind: "control", op: "exit" }), this.opts(10_000));
    if (pid !== undefined) {
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        if (!alive(pid)) break;
        try {
          process.kill(pid, signal);
        } catch {}
        for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      }
    }
    await unlink(this.socket).catch(() => undefined);
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Ends the masters to `target` that shepherds which no longer run left in `dir` (their sockets are
 * `<host>.<pid>`): a crashed shepherd's master would otherwise hold its connection until its idle
 * time runs out. A live shepherd's master is never touched.
 */
export async function endDeadMasters(dir: string, target: SshTarget, env?: NodeJS.ProcessEnv): Promise<string[]> {
  const ended: string[] = [];
  const prefix = `${target.name}.`;
  for (const leaf of await readdir(dir).catch(() => [] as string[])) {
    if (!leaf.startsWith(prefix)) continue;
    const pid = Number(leaf.slice(prefix.length));
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    await new ControlMaster(target, join(dir, leaf), [], env).exit().catch(() => undefined);
    ended.push(leaf);
  }
  return ended;
}
