/**
 * A shepherd killed (SIGKILL, by its pid) during a REMOTE start leaves nothing unreported (issue 31,
 * item 7): a real shepherd, a real sshd in a network namespace, real pi there. The remote sessions'
 * PATH starts with a directory of gates: a `tmux` that, while the test's gate file exists, runs a
 * pane's creation for real and then holds its answer (says so in a file, with its pid). The kill
 * lands while the answer is held: the remote pi runs on and no record knows it. The next shepherd
 * on the same agent dir reports the pane, prune closes it, and nothing of it stays on the host.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { type RemoteWorld, remoteSheepProcesses, remoteWorld } from "../support/remote-world.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

type Check = { name: string; verdict: string; detail: string; fix?: string };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, look: () => Promise<T | undefined> | T | undefined, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    assert.ok(Date.now() < deadline, `never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a shepherd killed during a remote start: the next one reports the remote pane and prune closes it", { timeout: 600_000 }, () => {
  let rw: RemoteWorld;
  let dir: string;
  let gate: string;
  let reached: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-rcrash-"));
    await chmod(dir, 0o755);
    const gates = join(dir, "gates");
    gate = join(dir, "gate");
    reached = join(dir, "reached");
    await mkdir(gates, { mode: 0o755 });
    const r = await execa("sh", ["-c", "command -v tmux"], { reject: false });
    assert.equal(r.exitCode, 0, "tmux is needed on PATH");
    const tmux = String(r.stdout).trim();
    for (const p of [tmux, gate, reached]) assert.ok(!p.includes("'"), `no quote in ${p}`);
    // A pane's creation runs for real; its answer is held while the gate exists.
    await writeFile(
      join(gates, "tmux"),
      [
        "#!/bin/sh",
        `case " $* " in *" new-window "*|*" new-session "*|*" split-window "*) pane=1;; *) pane=;; esac`,
        `if [ -e '${gate}' ] && [ -n "$pane" ]; then`,
        `  out=$('${tmux}' "$@"); rc=$?`,
        `  echo $$ > '${reached}.tmp' && mv '${reached}.tmp' '${reached}'`,
        `  while [ -e '${gate}' ]; do sleep 0.05; done`,
        `  printf '%s\\n' "$out"; exit $rc`,
        "fi",
        `exec '${tmux}' "$@"`,
        "",
      ].join("\n"),
    );
    await chmod(join(gates, "tmux"), 0o755);
    rw = await remoteWorld("remote-crash", { remoteHost: { pathFirst: gates } });
  });

  after(async () => {
    await rm(gate, { force: true });
    await rw?.world.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const doctor = async (s: Scene) => ((await s.ok({ action: "doctor" })).details as unknown as { checks: Check[] }).checks;
  const hostChecks = (checks: Check[]) => checks.filter((c) => /^host box: (orphan pane|stale launch spec)/.test(c.name));

  it("killed while the remote pane's creation is answered: doctor reports the orphan pane, prune closes it, its pi and spec are gone", async () => {
    const first = rw.world.scene();
    await writeFile(gate, "");
    const accepted = await first.shepherd.command({
      type: "prompt",
      message: directive({ tool: { name: "shepherd", arguments: { action: "start", agent: "echo", label: "cut-far", host: "box" } }, afterTool: "done" }),
    });
    assert.equal(accepted.success, true, JSON.stringify(accepted));
    const held = Number(
      await until("the remote pane's creation was reached", async () => (existsSync(reached) ? (await readFile(reached, "utf8")).trim() : undefined)),
    );
    assert.ok(held > 0);
    const shepherdPid = first.shepherd.proc.pid!;
    process.kill(shepherdPid, "SIGKILL");
    await Promise.resolve(first.shepherd.proc).catch(() => undefined);
    assert.equal(alive(shepherdPid), false, "the shepherd is dead");
    await rm(gate);
    const sheep = await until("the remote pi runs on", async () => {
      const p = await remoteSheepProcesses(rw.remote);
      return p.length ? p : undefined;
    });
    await new Promise((r) => setTimeout(r, 3000));
    const later = await remoteSheepProcesses(rw.remote);
    const ps = await rw.remote.exec(["ps", "-eo", "pid,ppid,args"]);
    assert.ok(later.length > 0, `the remote pi ran on: ${JSON.stringify({ sheep, later, ps: ps.stdout })}`);
    const state = join(rw.world.agentDir, "pi-shepherd", "state.json");
    if (existsSync(state)) assert.doesNotMatch(await readFile(state, "utf8"), /cut-far/, "no record of the sheep");

    const marks = join(rw.world.agentDir, "pi-shepherd", "host-starts");
    const marked = existsSync(marks) ? await readdir(marks) : [];
    assert.equal(marked.length, 1, "the killed start left its mark here");

    const markText = await readFile(join(marks, marked[0]!), "utf8");
    const next = rw.world.scene();
    // The first call of the new shepherd: a doctor that came before its session began said nothing
    // of the host's panes (only a composed shepherd looks there); it now waits for the session.
    const all = await doctor(next);
    const found = hostChecks(all);
    const panes = found.filter((c) => c.name === "host box: orphan pane");
    assert.equal(panes.length, 1, JSON.stringify({ markText, all }));
    assert.equal(panes[0]!.verdict, "warn");
    assert.match(panes[0]!.fix ?? "", /\/shepherd prune/);

    const pruned = await next.ok({ action: "prune" });
    assert.match(pruned.text, /box/, pruned.text);
    await until("the remote pi ended", async () => ((await remoteSheepProcesses(rw.remote)).some((p) => sheep.includes(p)) ? undefined : true), 30_000);
    const specs = await execa("sh", ["-c", 'grep -rl "" "$1" --include=spec.json || true', "sh", rw.remote.hostPath(rw.remote.agentDir)], { reject: false });
    assert.equal(String(specs.stdout).trim(), "", "no spec.json left on the host");
    assert.deepEqual(hostChecks(await doctor(next)), [], "the next doctor finds nothing on the host");
    await next.shepherd.stop();
  });
});
