/**
 * The link to another machine over real OpenSSH (a private sshd on 127.0.0.1, its own host key
 * and authorized_keys; the person's ~/.ssh never read): one master per host whatever the number
 * of calls, the bundle deployed by hash, the host key never accepted by us, BatchMode never
 * prompting, reconnects after the master is killed and after sshd goes away, nothing left after
 * close, no secret on any command line while connecting.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { alive } from "../../src/remote/link/master.ts";
import { remoteLine } from "../../src/remote/link/quote.ts";
import { type LinkState, RemoteSession, type RemoteSessionOptions } from "../../src/remote/link/session.ts";
import { linkBundle } from "../support/link-bundle.ts";
import { shellPayloads, UNICODE } from "../support/payloads.ts";
import { type PrivateSshd, startPrivateSshd } from "../support/private-sshd.ts";

const SECRET = `sk-test-${Math.random().toString(36).slice(2)}-secret`;

/** Every process whose command line holds `text`, with its pid. */
async function cmdlinesWith(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmd.includes(text)) found.push(`${pid}: ${cmd.replaceAll("\0", " ")}`);
  }
  return found;
}

/** ssh processes holding this socket as masters (ControlMaster=yes in their argv). */
async function mastersOn(socketDir: string): Promise<number[]> {
  const out: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0");
    if (argv[0]?.endsWith("ssh") && argv.includes("ControlMaster=yes") && argv.some((a) => a.startsWith(`ControlPath=${socketDir}`))) out.push(Number(pid));
  }
  return out;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("the ssh link", { timeout: 300_000 }, () => {
  let sshd: PrivateSshd;
  let dir: string;
  let stateDir: string;
  let remoteAgentDir: string;
  const sessions: RemoteSession[] = [];

  const options = (o: Partial<RemoteSessionOptions> & { sshOptions?: string[] } = {}): RemoteSessionOptions => ({
    host: { name: "box", ssh: sshd.alias, sshOptions: o.sshOptions ?? ["-F", sshd.config], node: process.execPath, agentDir: remoteAgentDir },
    localStateDir: stateDir,
    bundle: () => linkBundle(),
    init: (d) => ({ agentDir: d.agentDir, runtime: "tmux", piCommand: ["pi"], depth: 1, env: { ANTHROPIC_API_KEY: SECRET } }),
    backoff: { firstMs: 50, maxMs: 400 },
    ...o,
  });
  const session = (o: Partial<RemoteSessionOptions> & { sshOptions?: string[] } = {}) => {
    const s = new RemoteSession(options(o));
    sessions.push(s);
    return s;
  };

  before(async () => {
    sshd = await startPrivateSshd();
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-link-"));
    stateDir = join(dir, "state");
    remoteAgentDir = join(dir, `remote agent ${shellPayloads(join(dir, "MARK-agentdir"))[0]} ${UNICODE}`);
  });
  after(async () => {
    for (const s of sessions) await s.close();
    await sshd?.cleanup();
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
      assert.equal((await stat(d)).mode & 0o777, 0o700, d);
    }
    assert.equal((await stat(join(hashDir, "agent.mjs"))).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(hashDir), ["agent.mjs"], "no temp file left");
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith("MARK")),
      [],
      "no payload of the agent dir reached a shell",
    );
    await s.close();
  });

  it("never rewrites a hash dir: a file that differs from its hash is refused, with the fix", async () => {
    const bundle = await linkBundle("// changed\n");
    const hashDir = join(remoteAgentDir, "pi-shepherd", "bin", bundle.hash);
    const s = session({ bundle: async () => bundle });
    await s.connect();
    await s.close();
    await chmod(join(hashDir, "agent.mjs"), 0o600);
    await writeFile(join(hashDir, "agent.mjs"), "tampered");
    const t = session({ bundle: async () => bundle });
    await assert.rejects(t.connect(), /\[host_unreachable\] .*differs from its hash; a bundle dir is never rewritten/);
    assert.equal(await readFile(join(hashDir, "agent.mjs"), "utf8"), "tampered", "the file in use was not replaced");
    await t.close();
  });

  it("holds one master and one sshd session for the host, whatever the number of calls and channels", async () => {
    const s = session();
    await s.connect();
    const socketDir = join(stateDir, "ssh");
    await Promise.all(Array.from({ length: 40 }, (_, i) => s.call("echo", [i])));
    await Promise.all(Array.from({ length: 6 }, () => s.exec(remoteLine(["true"]), "")));
    assert.deepEqual((await mastersOn(socketDir)).length, 1, "one ssh master");
    assert.equal((await sshd.sessions()).length, 1, "one sshd session (one connection) for the host");
    await s.close();
  });

  it("refuses an unknown host key with the fix, and never writes a known hosts file", async () => {
    const s = session({ sshOptions: ["-F", sshd.unknownKeyConfig] });
    await assert.rejects(s.connect(), (e: Error) => {
      assert.match(e.message, /^\[host_unreachable\] host "box" unreachable since \S+: .*(Host key verification failed|host key is known).*/);
      assert.match(e.message, /run `ssh shepherd-test-host` once by hand to check the host key's fingerprint and accept it/);
      return true;
    });
    assert.equal(await readFile(join(sshd.dir, "known_hosts_empty"), "utf8"), "", "no host key was accepted");
    await s.close();
  });

  it("never prompts (BatchMode=yes): a key the host refuses fails at once, and ssh's askpass is never asked", async () => {
    const askpass = join(dir, "askpass.sh");
    const asked = join(dir, "ASKED");
    await writeFile(askpass, `#!/bin/sh\ntouch '${asked}'\necho wrong\n`, { mode: 0o700 });
    const env = { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: ":0" };
    // The setup would prompt: ssh without BatchMode asks askpass for a password here.
    await execa("ssh", ["-F", sshd.wrongKeyConfig, "-o", "NumberOfPasswordPrompts=1", "--", sshd.alias, "true"], { env, reject: false, stdin: "ignore" });
    assert.ok((await stat(asked).catch(() => undefined)) !== undefined, "the test's askpass would be asked without BatchMode");
    await rm(asked);
    const s = session({ sshOptions: ["-F", sshd.wrongKeyConfig], env });
    await assert.rejects(s.connect(), /\[host_unreachable\] .*Permission denied \(publickey,password\).*load it into ssh-agent/);
    assert.equal(await stat(asked).catch(() => undefined), undefined, "askpass was never asked");
    await s.close();
  });

  it("reconnects after its master is killed: down (calls fail at once), then up, subscriptions renewed, onReconnect told", async () => {
    const s = session();
    await s.connect();
    await s.call("host.subscribe", ["a_0123456789"]);
    const before = s.state() as Extract<LinkState, { status: "up" }>;
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
    let reconnected = 0;
    s.onReconnect(() => reconnected++);
    const events: string[] = [];
    s.onEvent((e) => events.push(e.agentId));
    process.kill(before.masterPid, "SIGKILL");
    await until("up again", () => s.state().status === "up" && seen.includes("down"));
    assert.deepEqual(seen.slice(0, 2), ["down", "up"]);
    const [whileDown] = await Promise.all(downCalls);
    assert.match(String(whileDown), /^\[host_unreachable\] host "box" unreachable since \S+: /);
    assert.equal(reconnected, 1);
    assert.deepEqual(events, ["a_0123456789"], "the subscription was renewed on the new agent");
    const now = s.state() as Extract<LinkState, { status: "up" }>;
    assert.notEqual(now.masterPid, before.masterPid);
    assert.deepEqual(await s.call("echo", ["after"]), ["after"]);
    assert.equal((await sshd.sessions()).length, 1);
    await s.close();
  });

  it("rides out an sshd restart, and reconnects after sshd and its sessions are gone and back", async () => {
    const s = session();
    await s.connect();
    const first = s.state() as Extract<LinkState, { status: "up" }>;
    await sshd.restart();
    assert.deepEqual(await s.call("echo", ["after restart"]), ["after restart"], "a restarted listener leaves the connection");
    assert.equal((s.state() as Extract<LinkState, { status: "up" }>).masterPid, first.masterPid);
    // Now the host goes away altogether: the listener and the connection it holds.
    await sshd.stop();
    await sshd.dropConnections();
    await until("down", () => s.state().status === "down");
    await assert.rejects(s.call("echo", ["x"]), /\[host_unreachable\] host "box" unreachable since /);
    await until("a refused reconnect", () => /refused/.test((s.state() as { reason?: string }).reason ?? ""));
    await assert.rejects(s.call("echo", ["x"]), /Connection refused\. is sshd running there, on that port\?/);
    await sshd.start();
    await until("up again", () => s.state().status === "up");
    assert.deepEqual(await s.call("echo", ["back"]), ["back"]);
    await s.close();
  });

  it("leaves nothing after close: no channel, no agent, no master, no socket, no sshd session", async () => {
    const s = session();
    await s.connect();
    const up = s.state() as Extract<LinkState, { status: "up" }>;
    const info = (await s.call("sys.info", [])) as { pid: number };
    await s.close();
    assert.equal(s.state().status, "closed");
    assert.equal(alive(up.masterPid), false, "the master ended");
    await until("the remote agent's end", () => !alive(info.pid), 5_000);
    assert.deepEqual(await readdir(join(stateDir, "ssh")), [], "the control socket is gone");
    await until("no sshd session", async () => (await sshd.sessions()).length === 0, 5_000);
    await assert.rejects(s.call("echo", []), /\[host_unreachable\] .*closed by this shepherd/);
  });

  it("carries secrets over stdin: never on any command line while it connects, and the agent has them", async () => {
    const s = session();
    let sampling = true;
    const leaks: string[] = [];
    const sampler = (async () => {
      while (sampling) {
        leaks.push(...(await cmdlinesWith(SECRET)));
        await new Promise((r) => setImmediate(r));
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
    const argv = [...shellPayloads(join(dir, "MARK-remote")), UNICODE, "$HOME ~ * %s"];
    const r = await s.exec(remoteLine(["printf", "%s\\0", ...argv]), "");
    assert.deepEqual(r.stdout.split("\0").slice(0, -1), argv);
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith("MARK")),
      [],
      "no payload reached a shell",
    );
    await s.close();
  });

  it("puts the control socket in a short private dir when the state dir's path is too long", async () => {
    const long = join(dir, "x".repeat(90), "state");
    const s = session({ localStateDir: long });
    await s.connect();
    const short = `/tmp/psh-${process.getuid?.()}`;
    const st = await stat(short);
    assert.equal(st.mode & 0o777, 0o700);
    assert.ok((await readdir(short)).includes(`box.${process.pid}`));
    await s.close();
    assert.ok(!(await readdir(short)).includes(`box.${process.pid}`));
  });
});
