/**
 * The link to another machine over real OpenSSH, against the suite's remote host (a network
 * namespace with its own sshd and a disk the shepherd reaches only through ssh): one master per
 * host whatever the number of calls, the bundle deployed by hash, the host key never accepted by
 * us, BatchMode never prompting, reconnects after the master is killed, sshd restarted and the
 * link cut, nothing left after close, no secret on any command line (here or there) while
 * connecting, the injection payloads through the remote shell.
 */
import assert from "node:assert/strict";
import { appendFile, chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import { execa } from "execa";
import { remoteBundle } from "../../src/remote/bundle.ts";
import { alive } from "../../src/remote/link/master.ts";
import { remoteLine } from "../../src/remote/link/quote.ts";
import { type LinkState, RemoteSession, type RemoteSessionOptions } from "../../src/remote/link/session.ts";
import { CallLost } from "../../src/remote/rpc/lost-call.ts";
import { linkBundle } from "../support/link-bundle.ts";
import { shellPayloads, UNICODE } from "../support/payloads.ts";
import { type RemoteHost, startRemoteHost } from "../support/remote-host.ts";

const SECRET = `sk-test-${Math.random().toString(36).slice(2)}-secret`;
type Up = Extract<LinkState, { status: "up" }>;

/** Every process (of any namespace: one pid namespace holds both sides) whose command line holds `text`. */
async function cmdlinesWith(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmd.includes(text)) found.push(`${pid}: ${cmd.replaceAll("\0", " ")}`);
  }
  return found;
}

async function isMaster(pid: number): Promise<boolean> {
  return (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0").includes("ControlMaster=yes");
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every state the session goes through, and what a call made the moment it went down answered. */
function followStates(s: RemoteSession): { seen: string[]; downCalls: Promise<unknown>[] } {
  const seen: string[] = [];
  const downCalls: Promise<unknown>[] = [];
  s.onState((st) => {
    seen.push(st.status);
    if (st.status === "down")
      downCalls.push(
        s.call("echo", ["while down"]).then(
          () => "answered",
          (e: Error) => e.message,
        ),
      );
  });
  return { seen, downCalls };
}

describe("the ssh link", { timeout: 600_000 }, () => {
  let r: RemoteHost;
  let dir: string;
  let stateDir: string;
  let remoteAgentDir: string;
  const sessions: RemoteSession[] = [];
  /** What the remote's home holds that a payload would have made. */
  const marks = async () => (await readdir(r.hostPath(r.home))).filter((n) => n.startsWith("MARK"));

  const options = (o: Partial<RemoteSessionOptions> & { sshOptions?: string[]; ssh?: string } = {}): RemoteSessionOptions => ({
    host: { name: "box", ssh: o.ssh ?? r.alias, sshOptions: o.sshOptions ?? ["-F", r.sshConfig], agentDir: remoteAgentDir },
    localStateDir: stateDir,
    bundle: () => linkBundle(),
    init: (d) => ({ agentDir: d.agentDir, runtime: "tmux", piCommand: ["pi"], depth: 1, env: { ANTHROPIC_API_KEY: SECRET } }),
    backoff: { firstMs: 50, maxMs: 400 },
    ...o,
  });
  const session = (o: Parameters<typeof options>[0] = {}) => {
    const s = new RemoteSession(options(o));
    sessions.push(s);
    return s;
  };

  before(async () => {
    r = await startRemoteHost();
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-link-"));
    stateDir = join(dir, "state");
    remoteAgentDir = join(r.home, `remote agent ${shellPayloads(join(r.home, "MARK-agentdir"))[0]} ${UNICODE}`);
  });
  // Each test's sessions end with it, failed or not: one left reconnecting would share the next test's control path.
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close();
  });
  after(async () => {
    await r?.end();
    await rm(dir, { recursive: true, force: true });
  });

  it("connects, deploys the bundle by hash into the remote state dir (0700, 0600), and calls the agent", async () => {
    const s = session();
    await s.connect();
    assert.equal(s.state().status, "up");
    assert.deepEqual(await s.call("echo", ["a", { b: 1 }]), ["a", { b: 1 }]);
    const bundle = await linkBundle();
    const hashDir = join(remoteAgentDir, "pi-shepherd", "bin", bundle.hash);
    for (const d of [join(remoteAgentDir, "pi-shepherd"), join(remoteAgentDir, "pi-shepherd", "bin"), hashDir]) {
      assert.equal((await stat(r.hostPath(d))).mode & 0o777, 0o700, d);
    }
    assert.equal((await stat(r.hostPath(join(hashDir, "agent.mjs")))).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(r.hostPath(hashDir)), ["agent.mjs"], "no temp file left");
    assert.deepEqual(await marks(), [], "no payload of the agent dir reached a shell");
    await s.close();
  });

  it("runs the real agent bundle (src/remote/bundle.ts): its four files deployed, hello names its hash, init and sys.info answer", async () => {
    const bundle = await remoteBundle();
    const s = session({ bundle: async () => bundle, init: (d) => ({ agentDir: d.agentDir, runtime: "tmux", piCommand: ["pi"], depth: 1, env: {} }) });
    await s.connect();
    const hashDir = join(remoteAgentDir, "pi-shepherd", "bin", bundle.hash);
    assert.deepEqual((await readdir(r.hostPath(hashDir))).sort(), bundle.files.map((f) => f.name).sort());
    assert.equal(s.initAnswer()?.runtime, "tmux");
    const info = (await s.call("sys.info", [])) as { node: string; stateDirMode: number | null };
    assert.match(info.node, /^v\d+\./);
    assert.equal(info.stateDirMode, 0o700);
    await s.close();
  });

  it("never rewrites a hash dir: a file that differs from its hash is refused, with the fix", async () => {
    const bundle = await linkBundle("// changed\n");
    const file = r.hostPath(join(remoteAgentDir, "pi-shepherd", "bin", bundle.hash, "agent.mjs"));
    const s = session({ bundle: async () => bundle });
    await s.connect();
    await s.close();
    await chmod(file, 0o600);
    await writeFile(file, "tampered");
    const t = session({ bundle: async () => bundle });
    await assert.rejects(t.connect(), /\[host_unreachable\] .*differs from its hash; a bundle dir is never rewritten/);
    assert.equal(await readFile(file, "utf8"), "tampered", "the file in use was not replaced");
    await t.close();
  });

  it("holds one master and one connection for the host, whatever the number of calls and channels", async () => {
    const s = session();
    await s.connect();
    await Promise.all(Array.from({ length: 40 }, (_, i) => s.call("echo", [i])));
    await Promise.all(Array.from({ length: 6 }, () => s.exec(remoteLine(["true"]), "")));
    const masters = [];
    for (const pid of r.localSsh()) if (await isMaster(pid)) masters.push(pid);
    assert.equal(masters.length, 1, "one ssh master");
    assert.equal(await r.connections(), 1, "one TCP connection to sshd");
    assert.equal(r.sshdChildren().length, 1, "one connection sshd accepted");
    await s.close();
  });

  it("refuses an unknown host key with the fix, and never writes a known hosts file", async () => {
    const s = session({ ssh: r.unknownAlias });
    await assert.rejects(s.connect(), (e: Error) => {
      assert.match(e.message, /^\[host_unreachable\] host "box" unreachable since \S+: .*(Host key verification failed|host key is known)/);
      assert.match(e.message, new RegExp(`run \`ssh ${r.unknownAlias}\` once by hand to check the host key's fingerprint and accept it`));
      return true;
    });
    assert.equal(await readFile(join(r.dir, "known_hosts_empty"), "utf8"), "", "no host key was accepted");
    // Nothing tries again by itself: only the person can check a host key (before, a connection every 15 s).
    let attempts = 0;
    s.onState((st) => {
      if (st.status === "down") attempts++;
    });
    await new Promise((ok) => setTimeout(ok, 2500)); // the test's backoff (50 ms doubling to 400) would have tried 7 times
    assert.equal(s.state().status, "down");
    assert.equal(attempts, 0, "no attempt in the background");
    // A call says why at once, with one period after ssh's own sentence.
    await assert.rejects(s.call("sys.info", []), (e: Error) => {
      assert.doesNotMatch(e.message, /\.\./);
      return /^\[host_unreachable\]/.test(e.message);
    });
    await s.close();
  });

  it("never prompts (BatchMode=yes): a key whose passphrase it would need fails at once, and ssh's askpass is never asked", async () => {
    // A passphrase-protected key the host accepts: ssh must ask for the passphrase to use it.
    const key = join(dir, "locked_key");
    await execa("ssh-keygen", ["-q", "-t", "ed25519", "-N", "a passphrase", "-f", key]);
    await appendFile(join(r.dir, "authorized_keys"), await readFile(`${key}.pub`));
    const config = join(dir, "locked_config");
    await writeFile(config, (await readFile(r.sshConfig, "utf8")).replace(/IdentityFile \S+/g, `IdentityFile ${key}`), { mode: 0o600 });
    const askpass = join(dir, "askpass.sh");
    const asked = join(dir, "ASKED");
    await writeFile(askpass, `#!/bin/sh\ntouch '${asked}'\necho wrong\n`, { mode: 0o700 });
    const env = { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: ":0" };
    // The setup would prompt: ssh without BatchMode asks askpass here.
    await execa("ssh", ["-F", config, "-o", "NumberOfPasswordPrompts=1", "--", r.alias, "true"], { env, reject: false, stdin: "ignore", timeout: 30_000 });
    assert.ok((await stat(asked).catch(() => undefined)) !== undefined, "the test's askpass would be asked without BatchMode");
    await rm(asked);
    const s = session({ sshOptions: ["-F", config], env });
    await assert.rejects(s.connect(), /\[host_unreachable\] .*Permission denied \(publickey\).*load it into ssh-agent/);
    assert.equal(await stat(asked).catch(() => undefined), undefined, "askpass was never asked");
    await s.close();
  });

  it("reconnects after its master is killed: down (calls fail at once), then up, subscriptions renewed, onReconnect told", async () => {
    const s = session();
    await s.connect();
    await s.call("files.subscribe", ["a_0123456789"]);
    const first = s.state() as Up;
    const { seen, downCalls } = followStates(s);
    let reconnected = 0;
    s.onReconnect(() => reconnected++);
    // Only what the agent after the reconnect sends (the old one's channel is gone once down is told;
    // the renewed subscription may speak before up is): the host's poll may tell a change more than once.
    const events: string[] = [];
    s.onEvent((e) => {
      if (seen.includes("down") && e.ev === "change") events.push(e.agentId);
    });
    const onItsWay = s.call("hang", []).catch((e: unknown) => e);
    process.kill(first.masterPid, "SIGKILL");
    const lost = await onItsWay;
    assert.ok(lost instanceof CallLost, `the call on its way is told it may have been done there: ${String(lost)}`);
    assert.match(
      (lost as CallLost).message,
      /^\[host_unreachable\] host "box" unreachable since \S+: .* The call was on its way when the connection went: it may have been done there\.$/,
    );
    await until("up again", () => s.state().status === "up" && seen.includes("down"));
    assert.deepEqual(seen.slice(0, 2), ["down", "up"]);
    const [whileDown] = await Promise.all(downCalls);
    assert.match(String(whileDown), /^\[host_unreachable\] host "box" unreachable since \S+: /);
    assert.equal(reconnected, 1);
    await until("an event from the new agent", () => events.length > 0, 10_000);
    assert.deepEqual(new Set(events), new Set(["a_0123456789"]), "the subscription was renewed on the new agent");
    assert.notEqual((s.state() as Up).masterPid, first.masterPid);
    assert.deepEqual(await s.call("echo", ["after"]), ["after"]);
    assert.equal(await r.connections(), 1);
    await s.close();
  });

  it("an agent that ends right after each init is tried again ever later, and a connection that held starts the waits over", async () => {
    const exits = join(r.home, "exits-left");
    await writeFile(r.hostPath(exits), "3");
    const s = session({
      init: (d) => ({ agentDir: d.agentDir, runtime: "tmux", piCommand: ["pi"], depth: 1, env: { LINK_AGENT_EXITS: exits } }),
      backoff: { firstMs: 50, maxMs: 150, stableMs: 2000 },
    });
    const waits: number[] = [];
    s.onState((st) => {
      if (st.status === "down" && st.retryInMs !== undefined) waits.push(st.retryInMs);
    });
    await s.connect().catch(() => undefined);
    await until("the fourth agent up (it stays)", () => waits.length >= 3 && s.state().status === "up");
    assert.deepEqual(waits, [50, 100, 150], "each agent that fell at once made the next wait longer, up to maxMs");
    await new Promise((resolve) => setTimeout(resolve, 2500));
    process.kill((s.state() as Up).masterPid, "SIGKILL");
    await until("down", () => waits.length === 4);
    assert.equal(waits[3], 50, "a connection that held 2 s starts over");
    await until("up again", () => s.state().status === "up");
  });

  it("rides out an sshd restart; after a restart that drops the connection it is down, then up again", async () => {
    const s = session();
    await s.connect();
    const first = s.state() as Up;
    await r.restartSshd();
    assert.deepEqual(await s.call("echo", ["after restart"]), ["after restart"], "a restarted sshd leaves the connection");
    assert.equal((s.state() as Up).masterPid, first.masterPid);
    const { seen, downCalls } = followStates(s);
    await r.restartSshd({ dropConnections: true });
    await until("up again", () => s.state().status === "up" && seen.includes("down"));
    assert.match(String((await Promise.all(downCalls))[0]), /^\[host_unreachable\] host "box" unreachable since /);
    assert.deepEqual(await s.call("echo", ["back"]), ["back"]);
    await s.close();
  });

  it("the link cut: down once the keepalives go unanswered, calls refused at once while down, up again when the link is back", async () => {
    const s = session({ sshOptions: ["-F", r.sshConfig, "-o", "ServerAliveInterval=1", "-o", "ServerAliveCountMax=2", "-o", "ConnectTimeout=2"] });
    await s.connect();
    await r.cut();
    try {
      await until("down", () => s.state().status === "down");
      await assert.rejects(s.call("echo", ["x"]), /\[host_unreachable\] host "box" unreachable since /);
      await until("a reconnect that timed out", () => /timed out|Timeout|not responding/i.test((s.state() as { reason?: string }).reason ?? ""));
      await assert.rejects(s.call("echo", ["x"]), /check the network path to the host/);
    } finally {
      await r.restore();
    }
    await until("up again", () => s.state().status === "up");
    assert.deepEqual(await s.call("echo", ["back"]), ["back"]);
    await s.close();
  });

  it("a host first met down: what was subscribed meanwhile is subscribed when it comes up, what was let go is not, and the reconnect is told", async () => {
    const s = session({ sshOptions: ["-F", r.sshConfig, "-o", "ConnectTimeout=2"] });
    let reconnected = 0;
    s.onReconnect(() => reconnected++);
    const events: string[] = [];
    s.onEvent((e) => {
      if (e.ev === "change") events.push(e.agentId);
    });
    await r.cut();
    try {
      await assert.rejects(s.connect(), /\[host_unreachable\]/);
      await assert.rejects(s.call("files.subscribe", ["a_wanted0001"]), /\[host_unreachable\]/);
      await assert.rejects(s.call("files.subscribe", ["a_letgo00001"]), /\[host_unreachable\]/);
      await assert.rejects(s.call("files.unsubscribe", ["a_letgo00001"]), /\[host_unreachable\]/);
    } finally {
      await r.restore();
    }
    await until("up", () => s.state().status === "up");
    assert.equal(reconnected, 1, "up at last after a failed first connection: the listeners look");
    await until("an event for the sheep subscribed while down", () => events.includes("a_wanted0001"), 15_000);
    assert.ok(!events.includes("a_letgo00001"), "the one let go while down was not subscribed again");
  });

  it("leaves nothing after close: no channel, no agent, no master, no socket, no connection", async () => {
    const s = session();
    await s.connect();
    const up = s.state() as Up;
    await s.close();
    assert.equal(s.state().status, "closed");
    assert.equal(alive(up.masterPid), false, "the master ended");
    assert.deepEqual(r.localSsh(), [], "no ssh of ours runs");
    await until("the remote agent's end", async () => (await r.leftovers()).length === 0, 10_000);
    await until("no connection", async () => (await r.connections()) === 0, 10_000);
    assert.deepEqual(await readdir(join(stateDir, "ssh")), [], "the control socket is gone");
    await assert.rejects(s.call("echo", []), /\[host_unreachable\] .*closed by this shepherd/);
  });

  it("a close while the first connection is on its way ends it: no master, no agent, no connection is left", async () => {
    const s = session();
    const first = s.connect().then(
      () => "up",
      (e: Error) => e.message,
    );
    await s.close();
    assert.match(await first, /closed by this shepherd/, "the first connection ends as closed");
    await until("no ssh of ours", () => r.localSsh().length === 0, 10_000);
    await until("the remote agent's end", async () => (await r.leftovers()).length === 0, 10_000);
    await until("no connection", async () => (await r.connections()) === 0, 10_000);
    // Nothing comes back later either (a master started after close would stay for its idle time).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(r.localSsh(), [], "no master started after close");
    assert.equal(await r.connections(), 0);
  });

  it("a shepherd that crashes leaves no connection for good: its agent ends with the channel, its master once idle", async () => {
    const child = execa(
      process.execPath,
      [
        "--import",
        "tsx",
        join(import.meta.dirname, "..", "support", "link-crash.ts"),
        JSON.stringify({ alias: r.alias, sshConfig: r.sshConfig, stateDir: join(dir, "crash"), agentDir: remoteAgentDir, idle: 2 }),
      ],
      { reject: false, buffer: false, stdout: "pipe", stderr: "inherit" },
    );
    const line = await new Promise<string>((res, rej) => {
      let text = "";
      child.stdout!.on("data", (d: Buffer) => {
        text += String(d);
        if (text.includes("\n")) res(text.trim());
      });
      child.once("exit", () => rej(new Error(`the session's process ended first: ${text}`)));
    });
    const [, masterPid, agentPid] = line.split(" ").map(Number);
    assert.ok(alive(masterPid!) && alive(agentPid!), line);
    child.kill("SIGKILL");
    await child;
    await until("the remote agent's end", () => !alive(agentPid!), 30_000);
    await until("the idle master's end", () => !alive(masterPid!), 30_000);
    await until("no connection", async () => (await r.connections()) === 0, 10_000);
    assert.deepEqual(await r.leftovers(), []);
  });

  it("carries secrets over stdin: never on any command line, here or there, while it connects; the agent has them", async () => {
    const s = session();
    let sampling = true;
    const leaks: string[] = [];
    const sampler = (async () => {
      while (sampling) {
        leaks.push(...(await cmdlinesWith(SECRET)));
        await new Promise((res) => setImmediate(res));
      }
    })();
    await s.connect();
    const init = (await s.call("link.init", [])) as { env: Record<string, string> };
    sampling = false;
    await sampler;
    assert.equal(init.env.ANTHROPIC_API_KEY, SECRET, "the secret reached the agent");
    assert.deepEqual(leaks, [], "no command line held the secret");
    await s.close();
  });

  it("carries the injection payloads through the remote shell exactly, and none runs", async () => {
    const s = session();
    await s.connect();
    const argv = [...shellPayloads(join(r.home, "MARK-remote")), UNICODE, "$HOME ~ * %s"];
    const out = await s.exec(remoteLine(["printf", "%s\\0", ...argv]), "");
    assert.deepEqual(out.stdout.split("\0").slice(0, -1), argv);
    assert.deepEqual(await marks(), [], "no payload reached a shell");
    await s.close();
  });

  it("puts the control socket in a short private dir when the state dir's path is too long", async () => {
    const s = session({ localStateDir: join(dir, "x".repeat(90), "state") });
    await s.connect();
    const short = `/tmp/psh-${process.getuid?.()}`;
    assert.equal((await stat(short)).mode & 0o777, 0o700);
    assert.ok((await readdir(short)).includes(`box.${process.pid}`));
    await s.close();
    assert.ok(!(await readdir(short)).includes(`box.${process.pid}`));
  });
});
