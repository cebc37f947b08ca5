import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
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
    assert.equal(snap.exited!.signal, "unknown");
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
