/**
 * The argv of every ssh we run. Order matters: ssh keeps the first value it reads of an option,
 * and the command line comes before every config file. So what the shepherd cannot do without
 * comes first (BatchMode=yes: a prompt would hang the shepherd; our control socket, not the
 * person's), then the person's `sshOptions`, then our defaults for what neither the options nor
 * the person's ssh config set (keepalives, a connect timeout). The host-key policy is never ours
 * to set: StrictHostKeyChecking and the known hosts files are the person's config, untouched.
 */
import { execa } from "execa";
import { ShepherdError } from "../../domain/errors.ts";

/** One host as the link needs it: its name in `hosts`, the destination, and the person's options. */
export interface SshTarget {
  name: string;
  /** host, user@host, or a Host alias of ~/.ssh/config. */
  ssh: string;
  sshOptions?: readonly string[];
}

/** How long a dead link may stay unnoticed: ServerAliveInterval × ServerAliveCountMax (ssh's default 3). */
export const DEFAULT_ALIVE_INTERVAL_S = 10;
export const DEFAULT_CONNECT_TIMEOUT_S = 20;
/** How long an idle master outlives its last channel: after a shepherd crash, nothing stays for good. */
export const MASTER_IDLE_S = 60;

/** ssh would read a destination starting with "-" as an option (-oProxyCommand=…). */
export function checkDestination(t: SshTarget): void {
  if (t.ssh === "" || t.ssh.startsWith("-") || /[\s\u0000-\u001f\u007f]/.test(t.ssh)) {
    throw new ShepherdError(
      "invalid_params",
      `host "${t.name}": "ssh" must be a destination as ssh takes it (host, user@host or a Host alias), without spaces or a leading "-".`,
    );
  }
}

/** What ssh would use for this destination with these options (`ssh -G`: read locally, nothing is connected). */
export async function effectiveConfig(t: SshTarget, env?: NodeJS.ProcessEnv): Promise<Map<string, string>> {
  checkDestination(t);
  const r = await execa("ssh", ["-G", ...(t.sshOptions ?? []), "--", t.ssh], {
    reject: false,
    stdin: "ignore",
    timeout: 10_000,
    ...(env ? { env, extendEnv: false } : {}),
  });
  const out = new Map<string, string>();
  if (r.exitCode !== 0) return out;
  for (const line of String(r.stdout).split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0 && !out.has(line.slice(0, sp))) out.set(line.slice(0, sp), line.slice(sp + 1));
  }
  return out;
}

/** Our defaults for what the person's config and options leave unset. */
export function defaultsFor(effective: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  if ((effective.get("serveraliveinterval") ?? "0") === "0") out.push("-o", `ServerAliveInterval=${DEFAULT_ALIVE_INTERVAL_S}`);
  if ((effective.get("connecttimeout") ?? "none") === "none") out.push("-o", `ConnectTimeout=${DEFAULT_CONNECT_TIMEOUT_S}`);
  return out;
}

export type SshMode =
  /** The master: authenticates, then backgrounds itself and holds the connection (exit 0 = up); idle: seconds it outlives its last channel. */
  | { kind: "master"; idleSeconds?: number }
  /** A channel through the master: never a connection of its own. */
  | { kind: "channel"; command: string }
  /** Asks the master: `-O check` / `-O exit`. */
  | { kind: "control"; op: "check" | "exit" }
  /** A one-off connection of its own (the doctor, without a shepherd's master). */
  | { kind: "direct"; command: string };

/**
 * The argv for one ssh. `defaults` is defaultsFor(effectiveConfig(...)), computed once per host.
 * A channel carries one remote command line (quote.ts's remoteLine), after "--" and the destination.
 */
export function sshArgv(t: SshTarget, controlPath: string | undefined, defaults: readonly string[], mode: SshMode): string[] {
  checkDestination(t);
  const fixed = ["-o", "BatchMode=yes"];
  if (controlPath !== undefined && mode.kind !== "direct") {
    fixed.push("-o", `ControlPath=${controlPath}`);
    if (mode.kind === "master") fixed.push("-o", "ControlMaster=yes", "-o", `ControlPersist=${mode.idleSeconds ?? MASTER_IDLE_S}`);
    else fixed.push("-o", "ControlMaster=no");
  } else {
    fixed.push("-o", "ControlMaster=no", "-o", "ControlPath=none");
  }
  // Forwards of the person's config are for their own sessions, not for the shepherd's.
  fixed.push("-o", "ClearAllForwardings=yes");
  const user = t.sshOptions ?? [];
  switch (mode.kind) {
    case "master":
      return [...fixed, ...user, ...defaults, "-N", "-T", "--", t.ssh];
    case "control":
      return [...fixed, ...user, "-O", mode.op, "--", t.ssh];
    case "channel":
    case "direct":
      return [...fixed, ...user, ...defaults, "-T", "--", t.ssh, mode.command];
  }
}
