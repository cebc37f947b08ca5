import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { INBOX_FILE, sheepDir } from "../../src/protocol/layout.js";
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

describe("sheep host: the async protocol on disk", () => {
  it("names inbox files so the sheep takes them in the order they were made, also from a new host", async () => {
    const agentId = "a_order00001";
    const dir = sheepDir(agentDir, agentId);
    await mkdir(join(dir, "inbox"), { recursive: true, mode: 0o700 });
    const ids = ["p_zzzzzzzzz1", "p_aaaaaaaaa1", "s_mmmmmmmmm1", "p_0000000001"];
    await host().submit(agentId, { kind: "prompt", promptId: ids[0]!, text: "1" });
    await host().submit(agentId, { kind: "prompt", promptId: ids[1]!, text: "2" });
    await host().submit(agentId, { kind: "steer", steerId: ids[2]!, target: ids[0]!, text: "3" });
    await host().submit(agentId, { kind: "prompt", promptId: ids[3]!, text: "4" });
    const names = (await readdir(join(dir, "inbox"))).sort();
    assert.deepEqual(
      names.map((n) => INBOX_FILE.exec(n)?.[2]),
      ids,
      "name order is submission order, whatever the ids",
    );
  });

  it("reads the message log as data: complete, well-formed lines only, each id once", async () => {
    const agentId = "a_msglog0001";
    const dir = sheepDir(agentDir, agentId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const good = (id: string, extra = {}) => JSON.stringify({ messageId: id, kind: "progress", text: `t ${id}`, at: "2026-01-01T00:00:00Z", ...extra });
    const lines = [
      good("m_aaaaaaaaa1"),
      "{ not json",
      good("m_../../etc1"),
      good("m_aaaaaaaaa2", { kind: "shout" }),
      good("m_aaaaaaaaa1"),
      good("m_aaaaaaaaa3", { kind: "question", awaitReply: true, timeoutSec: 30, promptId: "p_0000000001" }),
      good("m_aaaaaaaaa4").slice(0, 20), // still being written: no newline yet
    ];
    await writeFile(join(dir, "messages.jsonl"), lines.join("\n"));
    const h = host();
    const read = await h.messages(agentId);
    assert.deepEqual(
      read.map((m) => [m.messageId, m.kind, m.awaitReply ?? false]),
      [
        ["m_aaaaaaaaa1", "progress", false],
        ["m_aaaaaaaaa3", "question", true],
      ],
    );
    assert.deepEqual(await host().messages("a_nolog00001"), [], "no log, no messages");
  });

  it("lets exactly one reply through: the first, or the sheep's expiry", async () => {
    const agentId = "a_replies001";
    const dir = sheepDir(agentDir, agentId);
    await mkdir(join(dir, "replies"), { recursive: true, mode: 0o700 });
    const h = host();
    assert.equal(await h.reply(agentId, "m_bbbbbbbbb1", "first"), "delivered");
    assert.equal(await h.reply(agentId, "m_bbbbbbbbb1", "second"), "already_replied");
    await writeFile(join(dir, "replies", "m_bbbbbbbbb2.json"), JSON.stringify({ messageId: "m_bbbbbbbbb2", expired: true, at: "x" }));
    assert.equal(await h.reply(agentId, "m_bbbbbbbbb2", "late"), "expired");
    assert.deepEqual([...(await h.replies(agentId))].sort(), [
      ["m_bbbbbbbbb1", "replied"],
      ["m_bbbbbbbbb2", "expired"],
    ]);
    assert.deepEqual(
      (await readdir(join(dir, "replies"))).filter((n) => n.startsWith(".")),
      [],
      "no temp file left behind",
    );
  });
});
