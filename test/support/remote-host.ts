/**
 * The end-to-end suite's "remote host": another machine on this one, reachable only over ssh.
 *
 * - A network namespace with its own address on a veth pair (a random 10.x.y.0/30: the host end
 *   .1, the remote end .2), so the link can be cut and restored like a network.
 * - A private mount namespace, held by a keeper process (`sleep infinity`), whose tmpfs over an
 *   empty directory of the test is the remote machine's disk: its home (HOME), its pi agent dir
 *   (~/.pi/agent, with its own models.json), its TMPDIR. The host's mount namespace sees only
 *   the empty directory, so the shepherd reaches the remote files through ssh alone.
 * - A private sshd in both namespaces: a temp host key, a temp authorized_keys, a high port,
 *   `UsePAM no`, `StrictModes no`, a temp PidFile, started and ended by its pid (restartable).
 * - A temp client ssh config (`-F`): an alias for the host, with its key, a known_hosts holding
 *   the temp host key and `StrictHostKeyChecking yes`; and an alias whose host key is unknown.
 * - The scripted model reachable from the namespace: a TCP forwarder on the veth's host end.
 *
 * end() ends it all by handle: every process in the namespace (by `ip netns pids`, never by a
 * name), the namespace and so the veth pair, the mount with its last process, the forwarders,
 * the temp dir. If this machine cannot make a namespace, start fails saying so.
 */
import { execa, type Options, type Result } from "execa";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pidAlive } from "./leftovers.ts";
import { repoRoot } from "./rpc-shepherd.ts";

const SSHD = "/usr/sbin/sshd";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RemoteHostOptions {
  /** The port of a scripted model on 127.0.0.1 (ScriptedModel.port) that the remote pi uses; without one the remote agent dir has no models.json. */
  modelPort?: number;
  /** The alias of the host in the client config (default "remote"). */
  alias?: string;
  /** A directory of the remote (e.g. of stand-in programs) that every session's PATH names first. */
  pathFirst?: string;
}

export interface RemoteHost {
  /** The namespace's name (`ip netns`). */
  netns: string;
  /** The veth ends: the host's (in this namespace) and the remote's (in the netns). */
  veth: { host: string; remote: string };
  /** Addresses of the host end and of the remote end (where sshd listens). */
  hostAddress: string;
  address: string;
  port: number;
  /** The test's temp dir (on the host): keys, configs, logs, and the empty mount point. */
  dir: string;
  /** The mount point of the remote's tmpfs (empty from the host). */
  root: string;
  /** The remote user's home there (HOME of every ssh session), on the tmpfs. */
  home: string;
  /** The remote pi agent dir: ~/.pi/agent on the tmpfs. */
  agentDir: string;
  /** The remote's TMPDIR (and TMUX_TMPDIR), on the tmpfs. */
  tmp: string;
  /** PATH of every ssh session: Node 22 and pi first. */
  path: string;
  /** The client config to hand to ssh with -F. */
  sshConfig: string;
  /** The host's alias in sshConfig (host key known). */
  alias: string;
  /** An alias of the same sshd whose host key no known_hosts holds: ssh must refuse it. */
  unknownAlias: string;
  /** The remote pi agent dir's models.json's base URL (the forwarder on the host end), once a model is given. */
  readonly modelUrl: string | undefined;
  /** Points the remote pi agent dir (models.json, settings.json) at a scripted model on 127.0.0.1 by its port; returns the URL there. */
  useModel(modelPort: number): Promise<string>;
  /** The keeper of the mount namespace (nsenter's target) and the current sshd listener. */
  keeperPid: number;
  sshdPid(): number;
  /** The host's entry for the shepherd's settings `hosts` (extra's sshOptions come after the config's -F). */
  hostSettings(extra?: Record<string, unknown>): Record<string, unknown>;
  /** ssh to the alias (BatchMode, this config) running argv joined by ssh as its remote command line; never rejects. */
  ssh(remoteCommand: string[], o?: { alias?: string; input?: string; timeoutMs?: number }): Promise<Result>;
  /** Runs argv inside both namespaces, with the remote sessions' HOME/PATH/TMPDIR; never rejects. */
  exec(argv: string[], o?: Options): Promise<Result>;
  /** A path of the remote as the host can open it (through /proc/<keeper>/root), for setup and assertions. */
  hostPath(remotePath: string): string;
  writeFile(remotePath: string, content: string, mode?: number): Promise<void>;
  readFile(remotePath: string): Promise<string>;
  exists(remotePath: string): boolean;
  /** A git repository on the remote with these files committed on main; returns its path there. */
  repo(remotePath: string, files: Record<string, string>): Promise<string>;
  /** Another scripted model (by its port) reachable from the remote: its base URL there. */
  forward(port: number): Promise<string>;
  /** Established TCP connections to sshd's port (the ssh connections, whatever sshd restarts). */
  connections(): Promise<number>;
  /** Connections past authentication: sshd's per-connection processes that name their user ("sshd: root@notty"); a refused try is never one. */
  loggedIn(): Promise<number>;
  /** Children of the current sshd listener (one per connection it accepted, pre-auth included). */
  sshdChildren(): number[];
  /** Processes a session of sshd runs (a channel's command), under every sshd of the namespace. */
  sessions(): Promise<number[]>;
  /** Local ssh processes (the shepherd's ControlMaster and channels) that use this host's client config (to this alias only, if given). */
  localSsh(alias?: string): number[];
  /** Every pid in the namespace (keeper and sshd included). */
  pids(): Promise<number[]>;
  /** Pids in the namespace other than the keeper, sshd and its connections: what sheep and agents left. */
  leftovers(): Promise<number[]>;
  /** The link down, as a pulled cable: TCP connections stall (nothing is refused or reset), new ones fail; restore() and they go on. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** sshd ends and starts again on the same port (open connections stay, as with a service restart); `dropConnections` ends them too. */
  restartSshd(o?: { dropConnections?: boolean }): Promise<void>;
  /** SIGKILLs every tmux server of the remote (found by its sockets on the tmpfs, its pid in the namespace); returns their pids. */
  killTmux(): Promise<number[]>;
  /** Ends everything by handle. Safe to call twice. */
  end(): Promise<void>;
}

function run(cmd: string, args: string[], o: Options = {}): Promise<Result> {
  return execa(cmd, args, { reject: false, stdin: "ignore", ...o }) as Promise<Result>;
}

async function must(cmd: string, args: string[], what: string, o: Options = {}): Promise<string> {
  const r = await run(cmd, args, o);
  if (r.exitCode !== 0) throw new Error(`${what}: ${cmd} ${args.join(" ")} exited ${r.exitCode}: ${String(r.stderr).trim() || String(r.stdout).trim()}`);
  return String(r.stdout);
}

function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function exeOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}

/** Addresses in use on this machine, so a new /30 does not take one. */
async function usedNets(): Promise<Set<string>> {
  const out = await must("ip", ["-o", "-4", "addr", "show"], "listing addresses");
  return new Set([...out.matchAll(/inet (\d+\.\d+\.\d+)\.\d+/g)].map((m) => m[1]!));
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, withinMs: number, why?: () => string): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`remote host: ${what} within ${withinMs} ms${why ? `: ${why()}` : ""}`);
    await sleep(50);
  }
}

/** The last resorts of the hosts not ended yet, run when the process exits or is killed by a signal. */
const live = new Set<() => void>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let watching = false;

function watchExit(): void {
  if (watching) return;
  watching = true;
  const all = () => {
    for (const f of [...live]) f();
    live.clear();
  };
  process.once("exit", all);
  for (const sig of SIGNALS) {
    // Another listener (before ours or after) decides what the signal does, e.g. the bench's own
    // cleanup; alone, ours lets it end the process as it would have.
    const others = process.listenerCount(sig) > 0;
    const onSignal = () => {
      all();
      for (const s of SIGNALS) process.removeListener(s, handlers[s]!);
      if (!others && process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    handlers[sig] = onSignal;
    process.once(sig, onSignal);
  }
}
const handlers: Partial<Record<(typeof SIGNALS)[number], () => void>> = {};

/** Synchronous, for a process that is exiting: what the namespace holds by SIGKILL, then the namespace and the temp dir. */
function lastResort(netns: string, dir: string): void {
  try {
    for (const pid of execFileSync("ip", ["netns", "pids", netns], { encoding: "utf8" }).split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    execFileSync("ip", ["netns", "del", netns], { stdio: "ignore" });
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Fails loudly (never skips) when this machine cannot make the remote host. */
async function prerequisites(): Promise<void> {
  const missing: string[] = [];
  if (!existsSync(SSHD)) missing.push("sshd (apt-get install openssh-server)");
  for (const [cmd, pkg] of [
    ["ssh", "openssh-client"],
    ["ssh-keygen", "openssh-client"],
    ["ip", "iproute2"],
    ["ss", "iproute2"],
    ["nsenter", "util-linux"],
    ["unshare", "util-linux"],
  ] as const) {
    if ((await run("sh", ["-c", 'command -v "$1"', "sh", cmd])).exitCode !== 0) missing.push(`${cmd} (apt-get install ${pkg})`);
  }
  if (missing.length) throw new Error(`the remote-host tests need ${missing.join(", ")}; .ci/run installs them`);
  if (process.getuid?.() !== 0)
    throw new Error("the remote-host tests make a network namespace and mounts: they must run as root (CI's container runs as root)");
  // sshd refuses to start without its privilege separation directory, which its package's service makes.
  await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
}

export async function startRemoteHost(o: RemoteHostOptions = {}): Promise<RemoteHost> {
  await prerequisites();
  const ends: (() => unknown)[] = [];
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    const errors: unknown[] = [];
    for (let e = ends.pop(); e; e = ends.pop()) {
      try {
        await e();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "ending the remote host failed");
  };
  try {
    const tag = randomBytes(3).toString("hex");
    const netns = `pish-${tag}`;
    const veth = { host: `psh${tag}h`, remote: `psh${tag}r` };
    const used = await usedNets();
    let net = "";
    for (let i = 0; i < 100 && !net; i++) {
      const candidate = `10.${200 + (randomBytes(1)[0]! % 54)}.${randomBytes(1)[0]}`;
      if (!used.has(candidate)) net = candidate;
    }
    const quad = (randomBytes(1)[0]! % 63) * 4;
    const hostAddress = `${net}.${quad + 1}`;
    const address = `${net}.${quad + 2}`;
    const port = 20_000 + (randomBytes(2).readUInt16BE() % 40_000);
    const alias = o.alias ?? "remote";
    const unknownAlias = `${alias}-unknown`;

    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-remote-"));
    ends.push(() => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }));
    await chmod(dir, 0o700);
    const root = join(dir, "remote");
    await mkdir(root, { mode: 0o700 });
    const home = join(root, "home");
    const agentDir = join(home, ".pi", "agent");
    const tmp = join(root, "tmp");
    // The node_modules of the worktree is a symlink; the remote's PATH names real directories.
    const modules = realpathSync(join(repoRoot, "node_modules"));
    const path = `${o.pathFirst ? `${o.pathFirst}:` : ""}${join(modules, "node", "bin")}:${join(modules, ".bin")}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`;

    // The network: a namespace, a veth pair across, both ends up.
    const made = await run("ip", ["netns", "add", netns]);
    if (made.exitCode !== 0) {
      throw new Error(
        `this machine cannot make a network namespace (ip netns add ${netns}: ${String(made.stderr).trim()}); the remote-host tests need root with CAP_SYS_ADMIN and CAP_NET_ADMIN`,
      );
    }
    ends.push(async () => {
      await run("ip", ["link", "del", veth.host]);
      await must("ip", ["netns", "del", netns], "deleting the namespace");
    });
    // A test process that exits without end() (process.exit, an uncaught error, a signal) takes the host with it.
    const onExit = () => {
      if (!ended) lastResort(netns, dir);
    };
    live.add(onExit);
    watchExit();
    ends.push(() => live.delete(onExit));
    await must("ip", ["link", "add", veth.host, "type", "veth", "peer", "name", veth.remote], "making the veth pair");
    await must("ip", ["link", "set", veth.remote, "netns", netns], "moving the veth's end into the namespace");
    await must("ip", ["addr", "add", `${hostAddress}/30`, "dev", veth.host], "addressing the host end");
    await must("ip", ["link", "set", veth.host, "up"], "raising the host end");
    const inNs = ["netns", "exec", netns];
    await must("ip", [...inNs, "ip", "addr", "add", `${address}/30`, "dev", veth.remote], "addressing the remote end");
    await must("ip", [...inNs, "ip", "link", "set", veth.remote, "up"], "raising the remote end");
    await must("ip", [...inNs, "ip", "link", "set", "lo", "up"], "raising the namespace's loopback");

    // Whatever was started in the namespace ends by the namespace's own pid list, before it is deleted.
    const pids = async () => {
      const r = await run("ip", ["netns", "pids", netns]);
      return String(r.stdout)
        .split(/\s+/)
        .filter(Boolean)
        .map(Number)
        .filter((p) => pidAlive(p));
    };
    ends.push(async () => {
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        for (const pid of await pids()) {
          try {
            process.kill(pid, signal);
          } catch {
            // gone meanwhile
          }
        }
        const deadline = Date.now() + 5_000;
        while ((await pids()).length && Date.now() < deadline) await sleep(50);
      }
      const left = await pids();
      if (left.length) throw new Error(`remote host: processes ${left.join(", ")} outlived SIGKILL in ${netns}`);
    });

    // The disk: a keeper holds a private mount namespace with a tmpfs over root.
    const keeper = execa(
      "ip",
      [
        ...inNs,
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount -t tmpfs -o mode=0700,size=512m pi-shepherd-remote "$1" && mkdir -m 0700 "$1/home" "$1/tmp" && exec sleep infinity',
        "sh",
        root,
      ],
      { reject: false, stdin: "ignore", stdout: "ignore", stderr: "pipe", buffer: true },
    );
    const keeperPid = keeper.pid!;
    ends.push(async () => {
      if (keeper.exitCode === null) keeper.kill("SIGKILL");
      await keeper;
    });
    const hostPath = (p: string) => `/proc/${keeperPid}/root${p}`;
    const mounted = () => {
      try {
        return readFileSync(`/proc/${keeperPid}/mountinfo`, "utf8").includes(` ${root} `) && existsSync(hostPath(tmp));
      } catch {
        return false;
      }
    };
    await waitFor("the tmpfs mounted", () => mounted() || keeper.exitCode !== null, 10_000);
    if (!mounted()) throw new Error(`remote host: the private mount failed: ${String((await keeper).stderr).trim()}`);

    // Keys and configs.
    const keygen = (file: string) => must("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "pi-shepherd-test", "-f", file], "making a key");
    const hostKey = join(dir, "host_key");
    const clientKey = join(dir, "client_key");
    await keygen(hostKey);
    await keygen(clientKey);
    const pub = async (file: string) => (await readFile(`${file}.pub`, "utf8")).trim();
    const authorizedKeys = join(dir, "authorized_keys");
    await writeFile(authorizedKeys, `${await pub(clientKey)}\n`, { mode: 0o600 });
    const knownHosts = join(dir, "known_hosts");
    const [keyType, keyData] = (await pub(hostKey)).split(" ");
    await writeFile(knownHosts, `[${address}]:${port} ${keyType} ${keyData}\n`, { mode: 0o600 });
    const emptyKnownHosts = join(dir, "known_hosts_empty");
    await writeFile(emptyKnownHosts, "", { mode: 0o600 });
    const sshdConfig = join(dir, "sshd_config");
    await writeFile(
      sshdConfig,
      [
        `Port ${port}`,
        `ListenAddress ${address}`,
        `HostKey ${hostKey}`,
        `PidFile ${join(dir, "sshd.pid")}`,
        `AuthorizedKeysFile ${authorizedKeys}`,
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",
        "PrintMotd no",
        "PrintLastLog no",
        "UseDNS no",
        "AllowTcpForwarding no",
        "X11Forwarding no",
        "LogLevel VERBOSE",
        // The remote machine's own home, temp dir and tools (SetEnv overrides what sshd sets from passwd).
        `SetEnv HOME=${home} TMPDIR=${tmp} TMUX_TMPDIR=${tmp} PATH=${path} PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1`,
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    const sshConfig = join(dir, "ssh_config");
    const hostBlock = (name: string, known: string) =>
      [
        `Host ${name}`,
        `  HostName ${address}`,
        `  Port ${port}`,
        "  User root",
        `  IdentityFile ${clientKey}`,
        "  IdentitiesOnly yes",
        `  UserKnownHostsFile ${known}`,
        "  GlobalKnownHostsFile /dev/null",
        "  StrictHostKeyChecking yes",
        "  UpdateHostKeys no",
        "  PasswordAuthentication no",
        "  KbdInteractiveAuthentication no",
        "  LogLevel ERROR",
      ].join("\n");
    await writeFile(sshConfig, `${hostBlock(alias, knownHosts)}\n\n${hostBlock(unknownAlias, emptyKnownHosts)}\n`, { mode: 0o600 });

    // The remote machine's files: pi's agent dir on the scripted model, git's identity.
    await mkdir(hostPath(agentDir), { recursive: true, mode: 0o700 });
    await writeFile(
      hostPath(join(home, ".gitconfig")),
      "[user]\n\tname = Remote Person\n\temail = remote@example.com\n[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n",
      { mode: 0o600 },
    );

    // Forwarders on the host end: a remote pi reaches a scripted model on the host's loopback.
    const forward = async (target: number): Promise<string> => {
      const sockets = new Set<Socket>();
      const server: Server = createServer((inbound) => {
        const outbound = createConnection({ host: "127.0.0.1", port: target });
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {
            inbound.destroy();
            outbound.destroy();
          });
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, hostAddress, resolve);
      });
      ends.push(
        () =>
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy();
            server.close(() => resolve());
          }),
      );
      const addr = server.address() as { port: number };
      return `http://${hostAddress}:${addr.port}/v1`;
    };
    let modelUrl: string | undefined;
    const useModel = async (modelPort: number): Promise<string> => {
      const url = await forward(modelPort);
      const models = {
        providers: {
          scripted: {
            baseUrl: url,
            api: "openai-completions",
            apiKey: "scripted-key",
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            models: [{ id: "scripted-model", name: "Scripted Model", contextWindow: 128000, maxTokens: 4096 }],
          },
        },
      };
      await writeFile(hostPath(join(agentDir, "models.json")), JSON.stringify(models, null, 2), { mode: 0o600 });
      const settings = { defaultProvider: "scripted", defaultModel: "scripted-model", retry: { enabled: false }, quietStartup: true };
      await writeFile(hostPath(join(agentDir, "settings.json")), JSON.stringify(settings, null, 2), { mode: 0o600 });
      modelUrl = url;
      return url;
    };
    if (o.modelPort !== undefined) await useModel(o.modelPort);

    // sshd, in both namespaces, by its pid (nsenter execs it: no fork without a pid namespace).
    const spawnSshd = () =>
      execa("nsenter", ["-t", String(keeperPid), "-n", "-m", "--", SSHD, "-D", "-e", "-f", sshdConfig], {
        reject: false,
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
        buffer: false,
      });
    let sshd: ReturnType<typeof spawnSshd> | undefined;
    let sshdLog = "";
    const startSshd = async () => {
      const child = spawnSshd();
      sshdLog = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (d: string) => {
        sshdLog = (sshdLog + d).slice(-20_000);
      });
      sshd = child;
      await waitFor(
        "sshd listening",
        () => sshdLog.includes(`Server listening on ${address} port ${port}`) || child.exitCode !== null,
        10_000,
        () => sshdLog,
      );
      if (child.exitCode !== null) throw new Error(`remote host: sshd exited ${child.exitCode}: ${sshdLog.trim()}`);
    };
    // Awaited by its exit, not by its promise: the connections it forked hold its stderr open after it ended.
    const stopSshd = async () => {
      const child = sshd;
      if (!child) return;
      sshd = undefined;
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      child.stderr.destroy();
      child.catch(() => undefined);
    };
    ends.push(() => stopSshd());
    await startSshd();

    const sshdPid = () => sshd?.pid ?? -1;
    const childrenOf = (parents: Set<number>) => allPids().filter((p) => parents.has(ppidOf(p) ?? -1));
    const sshdProcs = async () => (await pids()).filter((p) => exeOf(p) === SSHD);
    const reachable = () =>
      new Promise<boolean>((resolve) => {
        const s = createConnection({ host: address, port, timeout: 1_000 });
        const done = (ok: boolean) => {
          s.destroy();
          resolve(ok);
        };
        s.once("connect", () => done(true));
        s.once("error", () => done(false));
        s.once("timeout", () => done(false));
      });

    const exec = (argv: string[], x: Options = {}) =>
      run("nsenter", ["-t", String(keeperPid), "-n", "-m", "--", ...argv], {
        ...x,
        env: { HOME: home, TMPDIR: tmp, TMUX_TMPDIR: tmp, PATH: path, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", ...x.env },
        extendEnv: false,
        cwd: x.cwd ?? "/",
      });
    const sshArgs = ["-F", sshConfig, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"];

    const host: RemoteHost = {
      netns,
      veth,
      hostAddress,
      address,
      port,
      dir,
      root,
      home,
      agentDir,
      tmp,
      path,
      sshConfig,
      alias,
      unknownAlias,
      get modelUrl() {
        return modelUrl;
      },
      useModel,
      keeperPid,
      sshdPid,
      hostSettings: (extra = {}) => ({ ssh: alias, ...extra, sshOptions: ["-F", sshConfig, ...((extra.sshOptions as string[] | undefined) ?? [])] }),
      ssh: (remoteCommand, x = {}) =>
        run("ssh", [...sshArgs, x.alias ?? alias, "--", ...remoteCommand], {
          ...(x.input !== undefined ? { input: x.input } : {}),
          timeout: x.timeoutMs ?? 30_000,
        }),
      exec,
      hostPath,
      writeFile: async (p, content, mode = 0o600) => {
        await mkdir(dirname(hostPath(p)), { recursive: true, mode: 0o700 });
        await writeFile(hostPath(p), content, { mode });
      },
      readFile: (p) => readFile(hostPath(p), "utf8"),
      exists: (p) => existsSync(hostPath(p)),
      repo: async (p, files) => {
        for (const [rel, content] of Object.entries(files)) await host.writeFile(join(p, rel), content, 0o644);
        await mkdir(hostPath(p), { recursive: true });
        for (const args of [
          ["init", "--quiet"],
          ["add", "--all"],
          ["commit", "--quiet", "-m", "initial"],
        ]) {
          const r = await exec(["git", "-C", p, ...args]);
          if (r.exitCode !== 0) throw new Error(`remote host: git ${args.join(" ")} in ${p}: ${String(r.stderr).trim()}`);
        }
        return p;
      },
      forward,
      connections: async () => {
        const r = await run("ip", [...inNs, "ss", "-tnH", "state", "established", "(", "sport", "=", `:${port}`, ")"]);
        return String(r.stdout)
          .split("\n")
          .filter((l) => l.trim()).length;
      },
      loggedIn: async () => {
        const named = (p: number) => {
          try {
            return /^sshd: [^\s@]+@/.test(readFileSync(`/proc/${p}/cmdline`, "latin1"));
          } catch {
            return false;
          }
        };
        return (await sshdProcs()).filter(named).length;
      },
      sshdChildren: () => childrenOf(new Set([sshdPid()])),
      sessions: async () => {
        // A session's command runs under the connection's user-side sshd; everything sshd is excluded.
        const sshds = new Set(await sshdProcs());
        return childrenOf(sshds).filter((p) => exeOf(p) !== SSHD);
      },
      // Found by the config's unique path on their command line, never by a process name.
      localSsh: (to) =>
        allPids().filter((p) => {
          try {
            const argv = readFileSync(`/proc/${p}/cmdline`, "latin1").split("\0");
            return argv.includes(sshConfig) && (to === undefined || argv.includes(to)) && pidAlive(p);
          } catch {
            return false;
          }
        }),
      pids,
      leftovers: async () => {
        const inside = await pids();
        const sshds = new Set((await sshdProcs()).concat(keeperPid));
        return inside.filter((p) => !sshds.has(p));
      },
      // The remote end down: the host keeps its route (NO-CARRIER), so packets are dropped, not refused or reset.
      cut: async () => {
        await must("ip", [...inNs, "ip", "link", "set", veth.remote, "down"], "cutting the link");
      },
      restore: async () => {
        await must("ip", [...inNs, "ip", "link", "set", veth.remote, "up"], "restoring the link");
        // The connected route comes back with the link; wait until sshd answers across it again.
        await waitFor("the link back up", reachable, 10_000);
      },
      restartSshd: async (x = {}) => {
        // Every sshd of the namespace but the listener serves a connection, a restart's orphans included.
        const connections = x.dropConnections ? (await sshdProcs()).filter((p) => p !== sshdPid()) : [];
        await stopSshd();
        for (const pid of connections) {
          try {
            process.kill(pid, "SIGTERM");
          } catch {
            // gone meanwhile
          }
        }
        await startSshd();
      },
      killTmux: async () => {
        const found = await exec(["find", root, "-type", "s"]);
        const killed: number[] = [];
        for (const socket of String(found.stdout).split("\n").filter(Boolean)) {
          const r = await exec(["tmux", "-S", socket, "display-message", "-p", "#{pid}"]);
          const pid = Number(String(r.stdout).trim());
          if (r.exitCode !== 0 || !Number.isInteger(pid) || !(await pids()).includes(pid)) continue;
          process.kill(pid, "SIGKILL");
          killed.push(pid);
        }
        return killed;
      },
      end,
    };
    return host;
  } catch (e) {
    await end().catch(() => undefined);
    throw e;
  }
}
