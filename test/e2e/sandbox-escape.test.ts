/**
 * The escape suite (issue 33), with real bubblewrap, real pi sheep in real tmux panes and the
 * scripted model making a sandboxed sheep call pi's bash, write and read tools: every way out it
 * tries fails (checked on what its tools returned AND on the host's disk), the shepherd keeps
 * working, and the same sheep still does its work in its cwd, which evidence and land see.
 *
 * The network: a sandboxed sheep has none of its own; its model (the scripted one on loopback, its
 * provider's exact address) and what `sandbox.allowNetwork` names are reached through the shepherd's
 * egress proxy, and every other attempt is refused there and written to the sheep's egress log.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Worktree } from "../../src/ports/workspace.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { git, lines } from "../support/git-repo.ts";
import type { Scene } from "../support/scene.ts";
import { directive, type LoggedRequest } from "../support/scripted-model.ts";
import { attempts, bash, type Call, CONNECT, DIRECT, ENV_SECRETS, FORWARD, node, q, unseen, verdicts } from "../support/escape.ts";

const SECRET = "FAKE-PRIVATE-KEY-do-not-leak";
const AWS = "aws_secret_access_key = FAKE-AWS-SECRET";

describe("a sandboxed sheep cannot get out, and still does its work", { timeout: 900_000 }, () => {
  let world: E2eWorld<"socket"> | undefined;
  let scene: Scene;
  let home: string;
  let stateFile: string;
  /** Loopback servers: one the user allowed by its exact address, one nobody allowed (counting who reached it). */
  let allowed: Server;
  let denied: Server;
  let deniedHits = 0;
  const portOf = (s: Server) => (s.address() as AddressInfo).port;

  const ok = (args: unknown) => scene.ok(args);
  /** Runs tool calls in the sheep, one round after another; returns the result and every tool text the model saw. */
  const run = async (agentId: string, tag: string, rounds: Call[][], reply: string) => {
    const promptId = await scene.prompt(agentId, directive({ rounds, afterTool: reply, tag }));
    const r = await ok({ action: "wait", promptId, timeout: 120 });
    const item = (r.details.results as { status: string; text: string; error?: string; evidence?: { files: { path: string; status: string }[] } }[])[0]!;
    const last = world!.model.log.filter((l: LoggedRequest) => l.tag === tag).at(-1);
    return { item, tools: last?.toolTexts ?? [] };
  };

  /** As run, on another shepherd of this world. */
  const run2 = async (on: Scene, agentId: string, tag: string, rounds: Call[][]) => {
    const promptId = await on.prompt(agentId, directive({ rounds, afterTool: "ok", tag }));
    const item = await on.wait(promptId, 120);
    return { item, tools: world!.model.log.filter((l: LoggedRequest) => l.tag === tag).at(-1)?.toolTexts ?? [] };
  };

  before(async () => {
    world = await e2eWorld("sandbox-escape", { tmux: "socket", repo: { "a.txt": lines(3) } });
    home = join(world.dir, "home");
    await mkdir(join(home, ".ssh"), { recursive: true, mode: 0o700 });
    await writeFile(join(home, ".ssh", "id_ed25519"), `${SECRET}\n`, { mode: 0o600 });
    await mkdir(join(home, ".aws"), { recursive: true, mode: 0o700 });
    await writeFile(join(home, ".aws", "credentials"), `[default]\n${AWS}\n`, { mode: 0o600 });
    await writeFile(join(home, ".bashrc"), "# the user's\n");
    // A secret kept elsewhere in HOME behind a symlink, as dotfile managers do.
    await mkdir(join(home, "dotfiles", "docker"), { recursive: true, mode: 0o700 });
    await writeFile(join(home, "dotfiles", "docker", "config.json"), `{"auths": "${SECRET}"}\n`, { mode: 0o600 });
    await symlink(join(home, "dotfiles", "docker"), join(home, ".docker"));
    stateFile = join(world.agentDir, "pi-shepherd", "state.json");
    allowed = createServer((_req, res) => res.end("hello-allowed"));
    denied = createServer((_req, res) => {
      deniedHits++;
      res.end("reached-denied");
    });
    denied.on("connection", () => deniedHits++);
    for (const s of [allowed, denied]) await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    // The exact address of one; the other only by a name that resolves to loopback, which is refused all the same.
    const sandbox = { allowNetwork: [`127.0.0.1:${portOf(allowed)}`, `localhost:${portOf(denied)}`] };
    await mkdir(join(world.agentDir, "pi-shepherd"), { recursive: true, mode: 0o700 });
    await writeFile(join(world.agentDir, "pi-shepherd", "settings.json"), JSON.stringify({ sandbox }), { mode: 0o600 });
    scene = world.scene({
      env: {
        ...world.env,
        HOME: home,
        // Secrets a sheep must never see: another provider's key, tokens of other services.
        GITHUB_TOKEN: "FAKE-GITHUB-TOKEN",
        GH_TOKEN: "FAKE-GH-TOKEN",
        AWS_SECRET_ACCESS_KEY: "FAKE-AWS-ENV",
        OPENAI_API_KEY: "FAKE-OPENAI-KEY",
      },
    });
  });

  after(async () => {
    await world?.cleanup();
    for (const s of [allowed, denied]) if (s?.listening) await new Promise<void>((r) => s.close(() => r()));
  });

  let other: { agentId: string; sessionPath: string; cwd: string };
  let boxed: string;

  it("starts a sandboxed sheep beside a plain one; status and herd say which is sandboxed", async () => {
    // Isolated: its worktree is another sheep's work the sandboxed one must not write.
    const o = (await ok({ action: "start", agent: "echo", label: "other", isolate: true })).details.agent as {
      agentId: string;
      sessionPath: string;
      cwd: string;
      sandboxed?: true;
    };
    assert.equal(o.sandboxed, undefined);
    other = o;
    // The other sheep's conversation exists on disk: there is something to steal.
    const said = await run(o.agentId, "other-hello", [[bash("echo other")]], "other answered");
    assert.equal(said.item.status, "completed");
    const r = await ok({ action: "start", agent: "echo", label: "boxed", sandbox: true });
    const agent = r.details.agent as { agentId: string; sandboxed?: boolean };
    assert.equal(agent.sandboxed, true);
    boxed = agent.agentId;
    const status = (await ok({ action: "status", agentId: "boxed" })).details.status as { sandboxed?: boolean; state: string };
    assert.deepEqual([status.state, status.sandboxed], ["idle", true]);
    assert.match((await ok({ action: "status", agentId: "boxed" })).text, /· sandboxed/);
    const herd = (await ok({ action: "herd" })).details as { agents?: { label: string; sandboxed?: boolean }[] };
    const shown = JSON.stringify(herd);
    assert.match(shown, /"label":"boxed"[^}]*"sandboxed":true/);
    assert.doesNotMatch(shown, /"label":"other"[^}]*"sandboxed":true/);
  });

  it("every way out fails: other files, secrets, the multiplexer, the shepherd, git's hooks and config, the environment", async () => {
    const w = world!;
    const shepherdPid = scene.shepherd.proc.pid!;
    const tmuxSocket = w.tmux.socket;
    const hostTmp = join(w.dir, "visible-from-host.txt");
    const otherPid = (JSON.parse(await readFile(join(w.agentDir, "pi-shepherd", "sheep", other.agentId, "status.json"), "utf8")) as { pid: number }).pid;
    assert.ok(Number.isSafeInteger(otherPid) && otherPid > 1, `the other sheep's pid ${otherPid}`);
    const script = attempts({
      "write-home": `echo x > ${q(join(home, "pwned.txt"))}`,
      "write-bashrc": `echo 'echo owned' >> ${q(join(home, ".bashrc"))}`,
      "read-ssh": `cat ${q(join(home, ".ssh", "id_ed25519"))}`,
      "read-aws": `cat ${q(join(home, ".aws", "credentials"))}`,
      "read-docker-link": `cat ${q(join(home, ".docker", "config.json"))}`,
      "read-other-session": `cat ${q(other.sessionPath)}`,
      "read-state": `cat ${q(stateFile)}`,
      // Where the user is root (as here): no capability is left to undo the mounts that hide and protect.
      "umount-secrets": `umount ${q(join(home, ".ssh"))} && cat ${q(join(home, ".ssh", "id_ed25519"))}`,
      "remount-root": "mount -o remount,rw /",
      capabilities: "awk '/^CapEff/ { exit ($2 ~ /^0+$/) }' /proc/self/status",
      "egress-log": `: > ${q(join(w.agentDir, "pi-shepherd", "egress-logs", boxed, "egress.ndjson"))}`,
      "tmux-list-panes": `tmux -S ${q(tmuxSocket)} list-panes -a`,
      "tmux-send-keys": `tmux -S ${q(tmuxSocket)} send-keys -t 0 'echo typed-by-sheep' Enter`,
      "write-other-worktree": `echo x > ${q(join(other.cwd, "pwned.txt"))}`,
      "signal-shepherd": `kill -0 ${shepherdPid}`,
      "signal-other-sheep": `kill -0 ${otherPid}`,
      // Attached, strace keeps running: the attempt then says so; else it ends with strace's own failure.
      "ptrace-shepherd": `strace -p ${shepherdPid} -o /dev/null & s=$!; sleep 1; if kill -0 $s 2>/dev/null; then kill $s; echo attached; else wait $s; fi`,
      // The seccomp filter: no ptrace even of its own child, no user namespace of its own (where it would have every capability).
      "ptrace-own-child": "strace -o /dev/null true",
      "new-user-namespace": "unshare -U true",
      "proc-other-sheep": `cat /proc/${otherPid}/environ`,
      "git-hook": "echo 'echo hooked' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit",
      "git-config": "git config core.hooksPath /tmp/evil",
      "new-privileges": "grep -q 'NoNewPrivs:[[:space:]]*0' /proc/self/status",
      "env-secrets": ENV_SECRETS,
      // The network: straight out (the sandbox has none), and through the proxy to what nobody allowed.
      "net-direct": `${node} -e ${q(DIRECT)} ${portOf(denied)}`,
      "net-proxy-loopback": `${node} -e ${q(CONNECT)} 127.0.0.1:${portOf(denied)}`,
      "net-proxy-name-to-loopback": `${node} -e ${q(CONNECT)} localhost:${portOf(denied)}`,
      "net-proxy-metadata": `${node} -e ${q(CONNECT)} 169.254.169.254:80`,
      // The host's code caches are bound in read-only: code written there would run in the user's own pi.
      "write-compile-cache": "echo x > /tmp/node-compile-cache/pwned-by-sheep",
      "write-jiti-seed": "echo x > /tmp/.pi-shepherd-jiti-seed/pwned-by-sheep",
    });
    // The compile cache the shepherd's pi made, and the seed the shepherd made for its sheep (never the machine's <tmpdir>/jiti).
    const seeds = join(w.agentDir, "pi-shepherd", "jiti-seed");
    const hostCaches = [join(tmpdir(), "node-compile-cache"), ...(existsSync(seeds) ? readdirSync(seeds).map((n) => join(seeds, n)) : [])];
    assert.equal(hostCaches.length, 2, "the compile cache and one seed are there to be bound");
    for (const c of hostCaches) assert.ok(existsSync(c), `${c} is there to be bound`);
    const { item, tools } = await run(
      boxed,
      "escape",
      [
        [bash(script)],
        [bash(`${node} -e ${q(FORWARD)} http://127.0.0.1:${portOf(allowed)}/`)],
        // Its own copy of the loader cache it may write: the host's must not see it.
        [bash(unseen([hostTmp, join(w.agentDir, "pi-shepherd", "pwned.txt"), join(w.agentDir, "settings.json"), "/tmp/jiti/pwned-by-sheep"]))],
        [{ name: "read", arguments: { path: join(home, ".ssh", "id_ed25519") } }],
        [{ name: "write", arguments: { path: join(home, "written-by-tool.txt"), content: "x" } }],
      ],
      "tried",
    );
    assert.deepEqual([item.status, item.text], ["completed", "tried"], item.error);
    const [shell, reached, , read, write] = tools as [string, string, string, string, string];
    assert.match(shell, /^done$/m, shell);
    const v = verdicts(shell);
    assert.deepEqual(Object.keys(v).length, 30, shell);
    assert.deepEqual(
      Object.entries(v).filter(([, x]) => x !== "refused"),
      [],
      shell,
    );
    // What pi's own tools returned.
    assert.doesNotMatch(read, new RegExp(SECRET));
    assert.match(read, /ENOENT|no such file|not found/i, read);
    assert.match(write, /EROFS|read-only|error/i, write);
    // Nothing of it reached the host.
    const inCaches = hostCaches.map((c) => join(c, "pwned-by-sheep"));
    for (const p of [
      join(home, "pwned.txt"),
      join(home, "written-by-tool.txt"),
      join(other.cwd, "pwned.txt"),
      hostTmp,
      join(w.agentDir, "pi-shepherd", "pwned.txt"),
      ...inCaches,
    ]) {
      assert.equal(existsSync(p), false, `${p} was not written`);
    }
    assert.equal(await readFile(join(home, ".bashrc"), "utf8"), "# the user's\n");
    assert.doesNotMatch(await readFile(join(w.agentDir, "settings.json"), "utf8"), /^x$/m, "pi's settings are the user's still");
    assert.equal(existsSync(join(w.cwd, ".git", "hooks", "post-commit")), false);
    assert.doesNotMatch(await readFile(join(w.cwd, ".git", "config"), "utf8"), /hooksPath/);
    assert.doesNotMatch(JSON.stringify(w.model.log.filter((l) => l.tag === "escape")), new RegExp(`${SECRET}|FAKE-AWS|FAKE-GITHUB|FAKE-OPENAI`));
    // Every attempt is in the sheep's egress log; the refusals in the audit log too.
    const log = (await readFile(join(w.agentDir, "pi-shepherd", "egress-logs", boxed, "egress.ndjson"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { target: string; verdict: string; reason?: string; up?: number; down?: number });
    // What the user allowed is reached, through the proxy; what nobody allowed never saw a connection.
    assert.match(reached, /^200 hello-allowed/m, `${reached} ${JSON.stringify(log)}`);
    assert.equal(deniedHits, 0, "nothing of the sandbox reached the server nobody allowed");
    const seen = (target: string, verdict: string) => log.find((e) => e.target === target && e.verdict === verdict);
    assert.ok(seen(`127.0.0.1:${portOf(allowed)}`, "allowed"), JSON.stringify(log));
    assert.ok(seen(`127.0.0.1:${portOf(denied)}`, "refused"), JSON.stringify(log));
    assert.ok(seen(`localhost:${portOf(denied)}`, "refused"), JSON.stringify(log));
    assert.ok(seen("169.254.169.254:80", "refused"), JSON.stringify(log));
    const audit = await readFile(join(w.agentDir, "pi-shepherd", "audit.ndjson"), "utf8");
    assert.match(audit, new RegExp(`"action":"egress"[^\n]*"target":"127\\.0\\.0\\.1:${portOf(denied)}"`), audit.slice(-2000));
    // status counts them, read shows them: the refusals as the log has them, each with its reason.
    const st = await ok({ action: "status", agentId: "boxed" });
    const counts = (st.details.status as { egress?: { allowed: number; refused: number } }).egress;
    assert.equal(counts?.refused, log.filter((e) => e.verdict === "refused").length, st.text);
    assert.ok((counts?.allowed ?? 0) >= 1, st.text);
    assert.match(st.text, new RegExp(`· sandboxed \\(egress: \\d+ allowed, ${counts?.refused} refused, `), st.text);
    const shown = (await ok({ action: "read", target: "boxed", source: "egress" })).text;
    const refusals: [string, string][] = [
      [`127.0.0.1:${portOf(denied)}`, "not_allowed"],
      [`localhost:${portOf(denied)}`, "loopback"],
      ["169.254.169.254:80", "not_allowed"],
    ];
    for (const [target, reason] of refusals) {
      assert.match(shown, new RegExp(`^\\S+ refused CONNECT ${target.replaceAll(".", "\\.")} \\(${reason}\\)$`, "m"), shown);
    }
    assert.match(shown, new RegExp(`^\\S+ allowed GET 127\\.0\\.0\\.1:${portOf(allowed)} → 127\\.0\\.0\\.1 · `, "m"), shown);
    // The shepherd keeps working: it answers, and the other sheep still does.
    const again = await run(other.agentId, "other-again", [[bash("echo still here")]], "other fine");
    assert.equal(again.item.status, "completed");
  });

  it("an isolated sandboxed sheep cannot write the checkout it was isolated from, yet commits its work, which evidence and land see", async () => {
    const w = world!;
    const r = await ok({ action: "start", agent: "echo", label: "iso", sandbox: true, isolate: true });
    const iso = r.details.agent as { agentId: string; cwd: string; worktree: Worktree; sandboxed?: true };
    assert.equal(iso.sandboxed, true);
    const { item, tools } = await run(
      iso.agentId,
      "iso-work",
      [
        [bash(attempts({ "write-checkout": `echo x > ${q(join(w.cwd, "pwned.txt"))}`, "main-git-config": `echo x >> ${q(join(w.cwd, ".git", "config"))}` }))],
        [{ name: "write", arguments: { path: "feature.txt", content: "made in the sandbox\n" } }],
        [bash("git add feature.txt && git -c user.name=sheep -c user.email=sheep@example.invalid commit -qm 'sandboxed work' && git log --oneline | head -1")],
      ],
      "worked",
    );
    assert.deepEqual([item.status, item.text], ["completed", "worked"], item.error);
    const v = verdicts(tools[0]!);
    assert.deepEqual(v, { "write-checkout": "refused", "main-git-config": "refused" }, tools[0]);
    assert.match(tools[2]!, /sandboxed work/, tools[2]);
    assert.equal(existsSync(join(w.cwd, "pwned.txt")), false);
    assert.deepEqual(
      item.evidence?.files.map((f) => [f.path, f.status]),
      [["feature.txt", "added"]],
    );
    await ok({ action: "land", agentId: "iso", message: "land the sandboxed work" });
    assert.equal(await readFile(join(w.cwd, "feature.txt"), "utf8"), "made in the sandbox\n");
    assert.match(await git(w.cwd, "log", "--oneline", "-3"), /sandboxed work/);
  });

  it("resume continues a sandboxed sheep's conversation, in a sandbox again, on its own session file", async () => {
    await ok({ action: "close", agentId: "boxed" });
    // Its model was reached through the proxy (a tunnel is logged when it ends, at the latest when the sheep closes), and the log stays.
    const log = await readFile(join(world!.agentDir, "pi-shepherd", "egress-logs", boxed, "egress.ndjson"), "utf8");
    const model = new URL(world!.model.baseUrl).host;
    assert.ok(
      log.split("\n").some((l) => l.includes(`"target":"${model}"`) && l.includes('"verdict":"allowed"') && !l.includes('"bytesDown":0,')),
      `the model was reached through the proxy: ${log}`,
    );
    // A closed sheep's log is still read: what it tried stays in sight.
    assert.match((await ok({ action: "read", target: boxed, source: "egress" })).text, new RegExp(`allowed CONNECT ${model.replaceAll(".", "\\.")} `));
    const r = await ok({ action: "start", resume: "boxed" });
    const again = r.details.agent as { agentId: string; sandboxed?: true; resumedFrom?: string };
    assert.deepEqual([again.sandboxed, again.resumedFrom], [true, boxed]);
    const { item, tools } = await run(
      again.agentId,
      "resumed",
      [[bash(attempts({ "read-ssh-again": `cat ${q(join(home, ".ssh", "id_ed25519"))}` }))]],
      "resumed fine",
    );
    assert.deepEqual([item.status, item.text], ["completed", "resumed fine"], item.error);
    // The tool texts of the whole conversation come with the request: this prompt's is the last.
    assert.deepEqual(verdicts(tools.at(-1)!), { "read-ssh-again": "refused" }, tools.at(-1));
    // The conversation before the close reached the model with this prompt: the same session goes on.
    const last = world!.model.log.filter((l) => l.tag === "resumed").at(-1)!;
    assert.ok(
      last.userTexts.some((t) => t.includes('"tag":"escape"')),
      "the earlier prompts are in the resumed conversation",
    );
  });

  it("where the user's default is on, every sheep is sandboxed and a start cannot turn it off", async () => {
    const w = world!;
    await writeFile(join(w.agentDir, "pi-shepherd", "settings.json"), JSON.stringify({ sandbox: { default: "on" } }), { mode: 0o600 });
    // Settings are read as a shepherd begins: a second one on the same agent dir.
    const strict = w.scene({ env: { ...w.env, HOME: home } });
    const refused = await strict.fails({ action: "start", agent: "echo", label: "unboxed", sandbox: false }, /\[invalid_params\]/);
    assert.match(refused, /sandbox: false, but the user's setting "sandbox.default" is "on"/);
    const r = await strict.ok({ action: "start", agent: "echo", label: "by-default" });
    const agent = r.details.agent as { agentId: string; sandboxed?: true };
    assert.equal(agent.sandboxed, true);
    const { item, tools } = await run2(strict, agent.agentId, "by-default", [
      [bash(attempts({ "read-aws-default": `cat ${q(join(home, ".aws", "credentials"))}` }))],
    ]);
    assert.equal(item.status, "completed", item.error);
    assert.deepEqual(verdicts(tools.at(-1)!), { "read-aws-default": "refused" }, tools.at(-1));
    await strict.ok({ action: "close", agentId: agent.agentId });
  });
});
