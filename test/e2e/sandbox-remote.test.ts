/**
 * The escape suite on the test's remote host (issue 33): a real pi shepherd here starts a sandboxed
 * sheep on the remote host (test/support/remote-host.ts: a network namespace, a tmpfs only the
 * remote sees, a private sshd), where the agent runs it in bubblewrap and serves its egress proxy.
 * The sheep does real work there (its model answers through the proxy there, pi's write tool edits a
 * file of its cwd there), and what it tries beyond that fails: the planted secrets of the remote
 * home, writes outside its cwd, the remote multiplexer, servers nobody allowed (straight out, and
 * through the proxy: another address, loopback by address and by name, the metadata address), the
 * pane's variables. Every attempt through the proxy is in its egress log there, which stays after it
 * closes.
 */
import assert from "node:assert/strict";
import { existsSync, readlinkSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { attempts, bash, type Call, CONNECT, DIRECT, ENV_SECRETS, egressLines, FORWARD, node, q, toolTextsOf, unseen, verdicts } from "../support/escape.ts";
import type { RemoteHost } from "../support/remote-host.ts";
import { assertNothingLeftRemote, type RemoteWorld, remoteAgentDir, remoteSheepProcesses, remoteWorld } from "../support/remote-world.ts";
import type { Item, Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

const SECRET = "FAKE-REMOTE-KEY-do-not-leak";
const AWS = "aws_secret_access_key = FAKE-REMOTE-AWS";

describe("a sandboxed sheep on the remote host: bubblewrap and the proxy there", { timeout: 900_000 }, () => {
  let rw: RemoteWorld;
  let remote: RemoteHost;
  let scene: Scene;
  /** Servers on this machine's end of the link, which the remote reaches: one allowed by its exact address, one nobody allowed. */
  let allowed: Server;
  let denied: Server;
  let deniedHits = 0;
  const portOf = (s: Server) => (s.address() as AddressInfo).port;
  let repo: string;
  let boxed: string;

  const run = async (agentId: string, tag: string, rounds: Call[][], reply: string) => {
    const promptId = await scene.prompt(agentId, directive({ rounds, afterTool: reply, tag }));
    const item = await scene.wait(promptId, 180);
    return { item, tools: toolTextsOf(rw.world.model.log, tag) };
  };
  const egressLog = async (agentId: string) =>
    egressLines(await readFile(join(remoteAgentDir(remote), "pi-shepherd", "egress-logs", agentId, "egress.ndjson"), "utf8"));

  before(async () => {
    rw = await remoteWorld("sandbox-remote", {
      agent: { shepherdSettings: { warmMemory: 0 } },
      // The same machine as a host whose agent's PATH has no bubblewrap (its node a wrapper that sets that PATH).
      moreHosts: (r) => ({ nobox: r.hostSettings({ node: join(r.home, "nobwrap", "node") }) }),
    });
    ({ remote } = rw);
    const made = await remote.exec([
      "sh",
      "-c",
      `set -e; d="$HOME/nobwrap"; mkdir -p "$d/bin"; for c in sh tmux git node pi; do ln -s "$(command -v $c)" "$d/bin/$c"; done
printf '#!/bin/sh\nPATH=%s exec %s "$@"\n' "$d/bin" "$(command -v node)" > "$d/node"; chmod +x "$d/node"`,
    ]);
    assert.equal(made.exitCode, 0, String(made.stderr));
    allowed = createServer((_req, res) => res.end("hello-allowed-remote"));
    denied = createServer((_req, res) => res.end("reached-denied"));
    denied.on("connection", () => deniedHits++);
    for (const s of [allowed, denied]) await new Promise<void>((r) => s.listen(0, remote.hostAddress, r));
    // The user's sandbox setting is this machine's; the host's sheep get the same policy through the agent's init.
    const settingsFile = join(rw.world.agentDir, "pi-shepherd", "settings.json");
    const settings = JSON.parse(await readFile(settingsFile, "utf8")) as Record<string, unknown>;
    const sandbox = { allowNetwork: [`${remote.hostAddress}:${portOf(allowed)}`, `localhost:${portOf(denied)}`] };
    await writeFile(settingsFile, JSON.stringify({ ...settings, sandbox }), { mode: 0o600 });
    // The remote user's secrets, planted in the remote home (the tmpfs only the remote sees).
    await remote.writeFile(join(remote.home, ".ssh", "id_ed25519"), `${SECRET}\n`, 0o600);
    await remote.writeFile(join(remote.home, ".aws", "credentials"), `[default]\n${AWS}\n`, 0o600);
    await remote.writeFile(join(remote.home, ".bashrc"), "# the remote user's\n", 0o644);
    repo = await remote.repo(join(remote.home, "proj"), { "a.txt": "one\n" });
    scene = rw.world.scene();
  });

  after(async () => {
    await rw?.world.cleanup();
    for (const s of [allowed, denied]) if (s?.listening) await new Promise<void>((r) => s.close(() => r()));
  });

  it("starts sandboxed there: bubblewrap runs in the remote host's namespace; status says sandboxed and names the host", async () => {
    const r = await scene.ok({ action: "start", agent: "echo", label: "boxed", host: "box", cwd: repo, sandbox: true });
    const agent = r.details.agent as { agentId: string; host?: string; sandboxed?: true };
    assert.deepEqual([agent.host, agent.sandboxed], ["box", true]);
    boxed = agent.agentId;
    const status = await scene.ok({ action: "status", agentId: boxed });
    assert.match(status.text, /· sandboxed/);
    assert.match(status.text, /\bbox\b/);
    // The pane's process there is bubblewrap, in the remote host's namespace.
    const pids = await remote.pids();
    const bwraps = pids.filter((p) => {
      try {
        return readlinkSync(`/proc/${p}/exe`).endsWith("/bwrap");
      } catch {
        return false;
      }
    });
    assert.ok(bwraps.length >= 1, "bubblewrap runs on the remote host");
    assert.ok(existsSync(join(remoteAgentDir(remote), "pi-shepherd", "egress", boxed, "egress.sock")), "its egress socket is served there");
  });

  it("does its work there through the proxy there, and every way out fails, each network refusal in its egress log there", async () => {
    const tmuxSocket = join(remote.agentDir, "pi-shepherd", "tmux", "default");
    assert.ok(remote.exists(tmuxSocket), `the remote's private tmux socket is ${tmuxSocket}`);
    const script = attempts({
      "read-ssh": `cat ${q(join(remote.home, ".ssh", "id_ed25519"))}`,
      "umount-secrets": `umount ${q(join(remote.home, ".ssh"))} && cat ${q(join(remote.home, ".ssh", "id_ed25519"))}`,
      capabilities: "awk '/^CapEff/ { exit ($2 ~ /^0+$/) }' /proc/self/status",
      // The host's agent wrote the seccomp program there: no user namespace of its own.
      "new-user-namespace": "unshare -U true",
      "read-aws": `cat ${q(join(remote.home, ".aws", "credentials"))}`,
      // Its own card is there on the host; the shepherd's state around its own directory is not bound in.
      "read-cards": `ls ${q(join(remote.agentDir, "pi-shepherd", "cards"))} | grep .`,
      "write-home": `echo x > ${q(join(remote.home, "pwned.txt"))}`,
      "write-bashrc": `echo 'echo owned' >> ${q(join(remote.home, ".bashrc"))}`,
      "tmux-list-panes": `tmux -S ${q(tmuxSocket)} list-panes -a`,
      "git-hook": "echo 'echo hooked' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit",
      "env-secrets": ENV_SECRETS,
      "net-direct": `${node} -e ${q(DIRECT)} ${portOf(denied)} ${remote.hostAddress}`,
      "net-proxy-other": `${node} -e ${q(CONNECT)} ${remote.hostAddress}:${portOf(denied)}`,
      "net-proxy-loopback": `${node} -e ${q(CONNECT)} 127.0.0.1:${remote.port}`,
      "net-proxy-name-to-loopback": `${node} -e ${q(CONNECT)} localhost:${portOf(denied)}`,
      "net-proxy-metadata": `${node} -e ${q(CONNECT)} 169.254.169.254:80`,
    });
    const { item, tools } = await run(
      boxed,
      "remote-escape",
      [
        [{ name: "write", arguments: { path: "notes.txt", content: "written in the remote sandbox\n" } }],
        [bash(script)],
        [bash(`${node} -e ${q(FORWARD)} http://${remote.hostAddress}:${portOf(allowed)}/`)],
        // pi's agent dir is a scratch space inside: a write lands there and vanishes, never on the host's disk.
        [bash(unseen([join(remote.agentDir, "pwned.txt"), join(remote.agentDir, "settings.json")]))],
      ],
      "tried",
    );
    // The model answered every round: through the proxy on the remote host, the sandbox having no network of its own.
    assert.deepEqual([item.status, item.text], ["completed", "tried"], item.error);
    const [, shell, reached] = tools as [string, string, string];
    assert.match(shell, /^done$/m, shell);
    const v = verdicts(shell);
    assert.equal(Object.keys(v).length, 16, shell);
    assert.deepEqual(
      Object.entries(v).filter(([, x]) => x !== "refused"),
      [],
      shell,
    );
    // Its work is in its cwd there; nothing else of the remote was written.
    assert.equal(await remote.readFile(join(repo, "notes.txt")), "written in the remote sandbox\n");
    for (const p of [join(remote.home, "pwned.txt"), join(remote.agentDir, "pwned.txt"), join(repo, ".git", "hooks", "post-commit")]) {
      assert.equal(remote.exists(p), false, `${p} was not written`);
    }
    assert.equal(await remote.readFile(join(remote.home, ".bashrc")), "# the remote user's\n");
    assert.doesNotMatch(await remote.readFile(join(remote.agentDir, "settings.json")), /^x$/m, "pi's settings there are the user's still");
    assert.ok(remote.exists(join(remote.agentDir, "pi-shepherd", "cards", `${boxed}.json`)), "there was a card to find");
    assert.doesNotMatch(JSON.stringify(rw.world.model.log.filter((l) => l.tag === "remote-escape")), new RegExp(`${SECRET}|FAKE-REMOTE-AWS`));
    // The allowed server was reached through the proxy there; the other never saw a connection.
    assert.match(reached, /^200 hello-allowed-remote/m, reached);
    assert.equal(deniedHits, 0, "nothing of the sandbox reached the server nobody allowed");
    const log = await egressLog(boxed);
    const seen = (target: string, verdict: string) => log.some((e) => e.target === target && e.verdict === verdict);
    assert.ok(seen(`${remote.hostAddress}:${portOf(allowed)}`, "allowed"), JSON.stringify(log));
    for (const t of [`${remote.hostAddress}:${portOf(denied)}`, `127.0.0.1:${remote.port}`, `localhost:${portOf(denied)}`, "169.254.169.254:80"]) {
      assert.ok(seen(t, "refused"), `${t} refused and logged: ${JSON.stringify(log)}`);
    }
    // The refusals there are in this machine's audit log too, with the host named (pushed over the link).
    const audit = join(rw.world.agentDir, "pi-shepherd", "audit.ndjson");
    const told = async () => (await readFile(audit, "utf8").catch(() => "")).split("\n").filter((l) => l.includes('"action":"egress"'));
    const until = Date.now() + 10_000;
    while (!(await told()).some((l) => l.includes('"target":"169.254.169.254:80"')) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const lines = (await told()).map((l) => JSON.parse(l) as { event: string; host?: string; agentId?: string; target?: string });
    const metadata = lines.find((e) => e.target === "169.254.169.254:80");
    assert.deepEqual([metadata?.event, metadata?.host, metadata?.agentId], ["refusal", "box", boxed], JSON.stringify(lines));
    // The shepherd keeps working: it answers for the host's sheep.
    const again = await run(boxed, "remote-again", [[bash("echo still here")]], "still fine");
    assert.equal(again.item.status, "completed", again.item.error);
  });

  it("the connection dropped: the agent there closes its proxy as it ends, the next agent serves the sheep's socket again, and its model answers", async () => {
    const socket = join(remoteAgentDir(remote), "pi-shepherd", "egress", boxed, "egress.sock");
    const agents = async () => (await remote.sessions()).length;
    const had = await agents();
    await remote.restartSshd({ dropConnections: true });
    let r: Item | undefined;
    let last = "";
    for (let i = 0; i < 60 && r === undefined; i++) {
      const p = await scene.shepherd.call({ action: "prompt", agentId: boxed, message: directive({ reply: "back through the proxy", tag: `BACK-${i}` }) });
      last = p.text;
      if (!p.isError) r = await scene.wait((p.details.prompt as { promptId: string }).promptId, 120);
      else await new Promise((res) => setTimeout(res, 1_000));
    }
    assert.deepEqual([r?.status, r?.text], ["completed", "back through the proxy"], `${last} ${r?.error ?? ""}`);
    assert.ok(existsSync(socket), "the sheep's socket is served again there");
    assert.ok((await agents()) <= had, "the old agent ended; one serves the host");
  });

  it("closed, its egress log stays there with its model reached through the proxy; nothing of it runs on", async () => {
    await scene.ok({ action: "close", agentId: boxed });
    const model = new URL(remote.modelUrl!).host;
    const log = await egressLog(boxed);
    assert.ok(
      log.some((e) => e.target === model && e.verdict === "allowed" && (e.bytesDown ?? 0) > 0),
      `the model ${model} was reached through the proxy there: ${JSON.stringify(log)}`,
    );
    assert.equal(existsSync(join(remoteAgentDir(remote), "pi-shepherd", "egress", boxed, "egress.sock")), false, "its socket closed with it");
    await assertNothingLeftRemote(rw);
  });

  it("a host without bubblewrap: [sandbox_unavailable] naming the host, what is missing and how to install it; nothing runs there unsandboxed", async () => {
    const sheepDir = join(remoteAgentDir(remote), "pi-shepherd", "sheep");
    const before = await readdir(sheepDir);
    const refused = await scene.fails(
      { action: "start", agent: "echo", label: "nobox", host: "nobox", cwd: repo, sandbox: true },
      /\[sandbox_unavailable\] on host "nobox": cannot start a sandboxed sheep: bubblewrap \(bwrap\) is not installed/,
    );
    assert.match(refused, /apt-get install bubblewrap/);
    assert.match(refused, /does not run unsandboxed instead/);
    assert.deepEqual(await readdir(sheepDir), before, "no sheep directory was made there");
    assert.deepEqual(await remoteSheepProcesses(remote), [], "no sheep pi runs there");
    const herd = (await scene.ok({ action: "herd" })).details as { agents?: unknown[] };
    assert.deepEqual(herd.agents ?? [], [], "no sheep was recorded");
    // The same host without a sandbox asked for still starts sheep: only the sandboxed start is refused.
    const plain = (await scene.ok({ action: "start", agent: "echo", label: "plain", host: "nobox", cwd: repo })).details.agent as {
      agentId: string;
      sandboxed?: true;
    };
    assert.equal(plain.sandboxed, undefined);
    await scene.ok({ action: "close", agentId: plain.agentId });
  });
});
