import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sheepDir } from "../../src/protocol/layout.js";
import { FileSheepHost } from "../../src/protocol/file-host.js";

let agentDir: string;
before(async () => {
  agentDir = await mkdtemp(join(tmpdir(), "pi-shepherd-host-"));
});
after(async () => {
  await rm(agentDir, { recursive: true, force: true });
});

function host(deadPidGraceMs = 50) {
  return new FileSheepHost({
    agentDir,
    piCommand: ["pi"],
    nodePath: "/node",
    launcherPath: "/l.mjs",
    reportExitPath: "/r.sh",
    sheepExtension: "/s.ts",
    env: {},
    depth: 1,
    deadPidGraceMs,
  });
}

async function statusWithPid(agentId: string, pid: unknown) {
  const dir = sheepDir(agentDir, agentId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, "status.json"), JSON.stringify({ pid, readyAt: new Date().toISOString(), state: "working", updatedAt: new Date().toISOString() }));
}

/** A pid that surely ran and surely ended: a child this test started and waited for. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  assert.ok(r.pid && r.pid > 0);
  return r.pid;
}

describe("sheep host: the pid witness", () => {
  it("a shepherd that never saw the sheep's pid alive (restarted after it died) still counts it dead after the grace", async () => {
    await statusWithPid("a_deadpid0001", deadPid());
    const h = host(); // a fresh host: nothing seen before, as after a restart
    assert.equal((await h.snapshot("a_deadpid0001")).exited, undefined, "not at the first look: the multiplexer may still speak");
    await new Promise((r) => setTimeout(r, 80));
    const snap = await h.snapshot("a_deadpid0001");
    assert.ok(snap.exited, "dead for longer than the grace: exited");
    assert.deepEqual([snap.exited!.code, snap.exited!.signal, snap.exited!.inferred], [null, null, true], "how it ended is not known");
  });

  it("a live pid is never taken for dead", async () => {
    await statusWithPid("a_livepid0001", process.pid);
    const h = host(0);
    assert.equal((await h.snapshot("a_livepid0001")).exited, undefined);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await h.snapshot("a_livepid0001")).exited, undefined);
  });

  for (const pid of [0, -1, 1.5, "123", null]) {
    it(`a status.json whose pid is ${JSON.stringify(pid)} is no witness`, async () => {
      const id = `a_badpid${String(Math.abs(Number(pid) * 10) || 7)
        .padStart(4, "0")
        .slice(0, 4)}`;
      await statusWithPid(id, pid);
      const h = host(0);
      await h.snapshot(id);
      await new Promise((r) => setTimeout(r, 10));
      assert.equal((await h.snapshot(id)).exited, undefined);
    });
  }
});

describe("sheep host: launch and exit reports", () => {
  it("gives the pane the launcher and its reporting form; the spec carries argv, env and cwd only", async () => {
    const h = host();
    const prepared = await h.prepare({ agentId: "a_launch0001", definition: { name: "w", description: "d", source: "user", path: "/w.md" }, cwd: "/work" });
    const dir = sheepDir(agentDir, "a_launch0001");
    assert.deepEqual(prepared.command, {
      argv: ["/node", "/l.mjs", join(dir, "spec.json")],
      reporting: ["/bin/sh", "/r.sh", join(dir, "exit.json"), "/node", "/l.mjs", join(dir, "spec.json")],
    });
    const spec = JSON.parse(await readFile(join(dir, "spec.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(Object.keys(spec).sort(), ["argv", "cwd", "env"]);
  });

  it("a pid that is not running marks the sheep gone at once; exited waits for the grace", async () => {
    await statusWithPid("a_gonepid0001", deadPid());
    const snap = await host(60_000).snapshot("a_gonepid0001");
    assert.equal(snap.piGone, true);
    assert.equal(snap.exited, undefined);
    await statusWithPid("a_livepid0002", process.pid);
    assert.equal((await host(0).snapshot("a_livepid0002")).piGone, undefined);
  });

  it("reads exit.json as written by report-exit.sh, and nothing else in its place", async () => {
    const write = async (id: string, body: string) => {
      const dir = sheepDir(agentDir, id);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(join(dir, "exit.json"), body);
    };
    await write("a_exitgood01", '{"code":null,"signal":"SIGKILL","at":"2026-01-01T00:00:00Z"}\n');
    assert.deepEqual((await host().snapshot("a_exitgood01")).exited, { code: null, signal: "SIGKILL", at: "2026-01-01T00:00:00Z" });
    await write("a_exitgood02", '{"code":3,"signal":null,"at":"2026-01-01T00:00:00Z"}\n');
    assert.equal((await host().snapshot("a_exitgood02")).exited?.code, 3);
    for (const [n, forged] of [
      '{"code":"3; rm -rf ~","signal":null}',
      '{"code":null,"signal":"\\u001b]0;pwned\\u0007"}',
      '{"code":null,"signal":null}',
      "[]",
      "null",
      "{",
    ].entries()) {
      await write(`a_exitbad00${n}`, forged);
      assert.equal((await host().snapshot(`a_exitbad00${n}`)).exited, undefined, forged);
    }
  });
});
