/**
 * The remote-host fixture itself (test/support/remote-host.ts), with real OpenSSH: what the
 * remote-sheep scenarios stand on holds. ssh with BatchMode reaches it through the client config
 * alone; its files are invisible from this mount namespace; the scripted model is reachable from
 * there; a cut link fails ssh and a restored one works; an unknown host key is refused; sshd
 * restarts; the remote tmux dies; end() leaves no namespace, mount, process or temp dir.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { pidAlive } from "../support/leftovers.ts";
import { type RemoteHost, startRemoteHost } from "../support/remote-host.ts";
import { type ScriptedModel, startScriptedModel } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Mount points of every process of this machine that name the path (the fixture's tmpfs lives in one namespace only). */
function mountsOf(path: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    let info: string;
    try {
      info = readFileSync(`/proc/${pid}/mountinfo`, "utf8");
    } catch {
      continue;
    }
    for (const line of info.split("\n")) if (line.split(" ")[4]?.startsWith(path)) found.push(`${pid}: ${line}`);
  }
  return found;
}

async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} within ${withinMs} ms`);
    await sleep(50);
  }
}

describe("the remote host fixture", { timeout: 300_000 }, () => {
  let model: ScriptedModel;
  let host: RemoteHost;

  before(async () => {
    model = await startScriptedModel();
    host = await startRemoteHost({ modelPort: model.port });
  });

  after(async () => {
    await host?.end();
    await model?.close();
  });

  it("ssh with BatchMode reaches it through the client config alone, as root with the remote's own home, Node 22 and pi", async () => {
    const r = await execa(
      "ssh",
      ["-F", host.sshConfig, "-o", "BatchMode=yes", host.alias, "--", 'echo "$HOME"; echo "$TMPDIR"; node --version; pi --version'],
      {
        reject: false,
        stdin: "ignore",
      },
    );
    assert.equal(r.exitCode, 0, String(r.stderr));
    const [home, tmp, node, pi] = String(r.stdout).split("\n");
    assert.equal(home, host.home);
    assert.equal(tmp, host.tmp);
    assert.match(node!, /^v22\./);
    assert.match(pi!, /^\d+\.\d+\.\d+/);
  });

  it("the remote agent dir is on a tmpfs only the remote sees: the host finds an empty directory and no mount", async () => {
    const remote = await host.ssh([`cat ${host.agentDir}/models.json; echo; stat -f -c %T ${host.root}; stat -c %a ${host.root}`]);
    assert.equal(remote.exitCode, 0, String(remote.stderr));
    assert.ok(String(remote.stdout).includes(host.modelUrl!), "the remote's models.json names the forwarder");
    assert.match(String(remote.stdout), /\ntmpfs\n700$/);
    assert.deepEqual(readdirSync(host.root), [], "the host sees the mount point empty");
    assert.equal(existsSync(`${host.agentDir}/models.json`), false);
    assert.deepEqual(
      readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .filter((l) => l.includes(host.root)),
      [],
      "no mount of the remote's in this mount namespace",
    );
  });

  it("the scripted model on the host's loopback answers a remote process through the forwarder", async () => {
    const script = `fetch(process.argv[1] + "/models").then((r) => r.json()).then((j) => console.log(j.data[0].id))`;
    const r = await host.exec(["node", "-e", script, host.modelUrl!]);
    assert.equal(r.exitCode, 0, String(r.stderr));
    assert.equal(String(r.stdout).trim(), "scripted-model");
  });

  it("a cut link makes ssh fail; restored, ssh works again, and a session open across the cut goes on", async () => {
    const session = execa("ssh", ["-F", host.sshConfig, "-o", "BatchMode=yes", host.alias, "--", "cat"], {
      reject: false,
      stdin: "pipe",
      stdout: "pipe",
      buffer: false,
    });
    session.stdout.setEncoding("utf8");
    let echoed = "";
    session.stdout.on("data", (d: string) => {
      echoed += d;
    });
    session.stdin.write("before\n");
    await until("the session echoing", () => echoed === "before\n");
    assert.equal(await host.connections(), 1, "one connection open");
    assert.equal(await host.loggedIn(), 1, "and logged in");
    assert.equal((await host.sessions()).length, 1, "one session: its cat");
    await host.cut();
    try {
      session.stdin.write("during\n");
      const r = await host.ssh(["true"], { timeoutMs: 15_000 });
      assert.notEqual(r.exitCode, 0, "ssh over a cut link fails");
      assert.match(String(r.stderr), /No route to host|timed out|unreachable/i);
      assert.equal(echoed, "before\n", "nothing crosses a cut link");
    } finally {
      await host.restore();
    }
    const r = await host.ssh(["echo", "back"]);
    assert.equal(r.exitCode, 0, String(r.stderr));
    assert.equal(String(r.stdout).trim(), "back");
    await until("what was sent during the cut arriving after it", () => echoed === "before\nduring\n", 30_000);
    session.stdin.end();
    assert.equal((await session).exitCode, 0);
  });

  it("an unknown host key is refused, never accepted", async () => {
    const before = await host.loggedIn();
    const r = await host.ssh(["true"], { alias: host.unknownAlias });
    assert.equal(r.exitCode, 255);
    assert.equal(await host.loggedIn(), before, "a refused try never logs in");
    assert.match(String(r.stderr), /Host key verification failed/);
    const again = await host.ssh(["true"], { alias: host.unknownAlias });
    assert.equal(again.exitCode, 255, "nothing was learnt: refused again");
  });

  it("sshd restarts on its port by a new pid; with dropConnections the open connections end too", async () => {
    const first = host.sshdPid();
    const session = execa("ssh", ["-F", host.sshConfig, "-o", "BatchMode=yes", host.alias, "--", "cat"], { reject: false, stdin: "pipe", buffer: false });
    await until("a connection logged in", async () => (await host.loggedIn()) === 1);
    await host.restartSshd();
    assert.notEqual(host.sshdPid(), first);
    assert.equal(pidAlive(first), false);
    assert.equal(await host.connections(), 1, "a plain restart keeps the connection it had, as sshd does");
    assert.equal((await host.ssh(["true"])).exitCode, 0);
    await host.restartSshd({ dropConnections: true });
    // The dropped session's ssh ends by itself; the test only waits for it.
    const ended = await session;
    assert.notEqual(ended.exitCode, 0, "the dropped connection's ssh failed");
    assert.equal(await host.connections(), 0);
    assert.equal((await host.ssh(["true"])).exitCode, 0);
  });

  it("killTmux SIGKILLs the remote's tmux servers (found by their sockets on its tmpfs) and what ran in them ends", async () => {
    const r = await host.ssh([`tmux -S ${host.tmp}/t -f /dev/null new-session -d sleep 600`]);
    assert.equal(r.exitCode, 0, String(r.stderr));
    await until("the tmux server and its sleep", async () => (await host.leftovers()).length === 2);
    const killed = await host.killTmux();
    assert.equal(killed.length, 1);
    await until("nothing of the tmux left", async () => (await host.leftovers()).length === 0);
  });

  it("end() leaves no namespace, veth, mount, process or temp dir; a second end() does nothing", async () => {
    const other = await startRemoteHost({ modelPort: model.port });
    const started = await other.ssh([`tmux -S ${other.tmp}/t -f /dev/null new-session -d sleep 600; mkdir -p ${other.agentDir}/x`]);
    assert.equal(started.exitCode, 0, String(started.stderr));
    const session = execa("ssh", ["-F", other.sshConfig, "-o", "BatchMode=yes", other.alias, "--", "cat"], { reject: false, stdin: "pipe", buffer: false });
    // keeper, sshd, its connection, the connection's cat, tmux and its sleep
    await until("everything running there", async () => (await other.loggedIn()) === 1 && (await other.pids()).length >= 6);
    const pids = await other.pids();
    assert.ok(mountsOf(other.root).length > 0, "the tmpfs is mounted somewhere");
    await other.end();
    await other.end();
    const netns = String((await execa("ip", ["netns", "list"])).stdout);
    assert.equal(netns.includes(other.netns), false, "the namespace is gone");
    assert.notEqual((await execa("ip", ["link", "show", other.veth.host], { reject: false })).exitCode, 0, "the veth pair is gone");
    assert.deepEqual(
      pids.filter((p) => pidAlive(p)),
      [],
      "no process of the namespace lives",
    );
    assert.deepEqual(mountsOf(other.root), [], "no mount namespace holds the tmpfs");
    assert.equal(existsSync(other.dir), false, "the temp dir is gone");
    assert.notEqual((await session).exitCode, 0, "the open ssh ended with its host");
  });
});
