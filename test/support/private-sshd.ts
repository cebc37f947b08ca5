/**
 * A private OpenSSH server on 127.0.0.1 for the link's tests, until the namespace host
 * (remote-host.ts) stands: a temp host key, a temp authorized_keys, a high port, started and
 * ended by pid. The client side is a temp ssh config (a Host alias, the port, the key, a known
 * hosts file holding the temp host key, StrictHostKeyChecking yes) the tests hand to the link as
 * `sshOptions: ["-F", config]`, so the person's own ~/.ssh is never read or written.
 */
import { execa } from "execa";
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PrivateSshd {
  dir: string;
  port: number;
  /** The Host alias the config names. */
  alias: string;
  /** The client config: alias → 127.0.0.1:port, the key, known hosts with the server's key. */
  config: string;
  /** A client config whose known hosts file is empty (the host key is unknown). */
  unknownKeyConfig: string;
  /** A client config whose identity the server does not accept. */
  wrongKeyConfig: string;
  knownHosts: string;
  /** sshd's listener pid (its sessions are its children). */
  pid(): number;
  /** Connections sshd holds now: the children of the listener, and those of listeners before a restart. */
  sessions(): Promise<number[]>;
  /** Ends every connection (its sshd processes), as a host going away does. */
  dropConnections(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  cleanup(): Promise<void>;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Children of a pid, from /proc (no ps parsing). */
export async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** Every descendant of a pid. */
export async function descendantsOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const c of await childrenOf(pid)) out.push(c, ...(await descendantsOf(c)));
  return out;
}

export async function startPrivateSshd(): Promise<PrivateSshd> {
  const sshdBin = "/usr/sbin/sshd";
  if ((await execa(sshdBin, ["-V"], { reject: false })).stderr.indexOf("OpenSSH") < 0) {
    throw new Error("OpenSSH's sshd is required for these tests; install it (apt-get install openssh-server)");
  }
  // sshd run as root wants its privilege separation dir, which the package's service makes at boot.
  if (process.getuid?.() === 0) await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sshd-"));
  await chmod(dir, 0o700);
  const key = (name: string) => execa("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", join(dir, name)]);
  await Promise.all([key("host_key"), key("client_key"), key("other_key")]);
  await writeFile(join(dir, "authorized_keys"), await readFile(join(dir, "client_key.pub")), { mode: 0o600 });
  const port = await freePort();
  const alias = "shepherd-test-host";
  const hostPub = (await readFile(join(dir, "host_key.pub"), "utf8")).trim().split(/\s+/).slice(0, 2).join(" ");
  const knownHosts = join(dir, "known_hosts");
  await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`, { mode: 0o600 });
  await writeFile(join(dir, "known_hosts_empty"), "", { mode: 0o600 });
  await writeFile(
    join(dir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      "UsePAM no",
      "StrictModes no",
      "PasswordAuthentication yes",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin yes",
      "MaxSessions 10",
      "AcceptEnv NONE",
      "LogLevel ERROR",
      "",
    ].join("\n"),
  );
  const client = (name: string, identity: string, known: string) =>
    writeFile(
      join(dir, name),
      [
        `Host ${alias}`,
        "  HostName 127.0.0.1",
        `  Port ${port}`,
        `  IdentityFile ${join(dir, identity)}`,
        "  IdentitiesOnly yes",
        `  UserKnownHostsFile ${known}`,
        "  GlobalKnownHostsFile /dev/null",
        "  StrictHostKeyChecking yes",
        "  LogLevel ERROR",
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
  await client("ssh_config", "client_key", knownHosts);
  await client("ssh_config_unknown", "client_key", join(dir, "known_hosts_empty"));
  await client("ssh_config_wrong", "other_key", knownHosts);

  let child: ChildProcess | undefined;
  /** Connections of listeners that were stopped: a restarted sshd leaves them running. */
  const orphans = new Set<number>();
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const sessions = async () => {
    for (const o of orphans) if (!alive(o)) orphans.delete(o);
    return [...(child?.pid ? await childrenOf(child.pid) : []), ...orphans];
  };
  const start = async () => {
    child = spawn(sshdBin, ["-D", "-e", "-f", join(dir, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr?.on("data", (d) => {
      err += String(d);
    });
    // Ready when the port answers.
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`sshd exited: ${err}`);
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(port, "127.0.0.1");
        s.once("connect", () => {
          s.destroy();
          resolve(true);
        });
        s.once("error", () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`sshd did not listen on ${port}: ${err}`);
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    for (const pid of c.pid ? await childrenOf(c.pid) : []) orphans.add(pid);
    const ended = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await ended;
  };
  await start();
  return {
    dir,
    port,
    alias,
    config: join(dir, "ssh_config"),
    unknownKeyConfig: join(dir, "ssh_config_unknown"),
    wrongKeyConfig: join(dir, "ssh_config_wrong"),
    knownHosts,
    pid: () => child?.pid ?? -1,
    sessions,
    dropConnections: async () => {
      for (const pid of await sessions()) {
        for (const p of [pid, ...(await descendantsOf(pid))]) {
          try {
            process.kill(p, "SIGKILL");
          } catch {}
        }
      }
    },
    stop,
    start,
    restart: async () => {
      await stop();
      await start();
    },
    cleanup: async () => {
      // sshd -D ends its listener on TERM; the sessions it started end with their connections.
      const held = await sessions();
      await stop();
      for (const s of held) {
        try {
          process.kill(s, "SIGTERM");
        } catch {}
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
