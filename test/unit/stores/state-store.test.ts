import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa, type Subprocess } from "execa";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentRecord, DelegationRecord, PromptRecord } from "../../../src/ports/types.ts";
import { LocalSheepFiles } from "../../../src/protocol/local-sheep-files.ts";
import { sheepDir, stateDir } from "../../../src/protocol/layout.ts";
import { FileStateStore } from "../../../src/stores/state-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { node22, repoRoot } from "../../support/rpc-shepherd.ts";
import { parseAgentId, parsePromptId } from "../../../src/domain/ids.ts";

const agent = (agentId: string, owner: string): AgentRecord => ({
  agentId: parseAgentId(agentId),
  agent: "echo",
  label: agentId,
  runtime: "tmux",
  paneId: "%1",
  cwd: "/",
  sessionPath: "/s.jsonl",
  createdAt: "2026-01-01T00:00:00Z",
  owner,
  state: "idle",
});

describe("state.json store", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-store-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a remote sheep's record, whose pane id names its host; a prefix that is not the record's host is refused", async () => {
    const d = join(dir, "remote");
    await mkdir(d, { recursive: true, mode: 0o700 });
    const far: AgentRecord = { ...agent("a_remote0001", "A"), host: "gpu", paneId: "gpu/%3" };
    const store = new FileStateStore(d);
    await store.save("A", { agents: [far], prompts: [] });
    assert.deepEqual((await store.load()).state.agents, [far], "written and read back whole");
    const forged = [
      { ...agent("a_remote0002", "A"), host: "gpu", paneId: "box/%3" },
      { ...agent("a_remote0003", "A"), paneId: "gpu/%3" },
      { ...agent("a_remote0004", "A"), host: "-oProxyCommand=x", paneId: "-oProxyCommand=x/%3" },
    ];
    await writeFile(join(d, "state.json"), JSON.stringify({ version: 1, agents: [far, ...forged], prompts: [] }));
    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(state.agents, [far]);
    assert.match(warnings[0]!, /set aside 3 records/);
  });

  it("keeps every owner's records when two shepherds write at once", async () => {
    const d = join(dir, "merge");
    const a = new FileStateStore(d);
    const b = new FileStateStore(d);
    await Promise.all([
      a.save("A", {
        agents: [agent("a_aaaaaaaaa1", "A")],
        prompts: [{ promptId: parsePromptId("p_aaaaaaaaa1"), agentId: parseAgentId("a_aaaaaaaaa1"), submittedAt: "x" }],
      }),
      b.save("B", { agents: [agent("a_bbbbbbbbb1", "B")], prompts: [] }),
      a.save("A", { agents: [agent("a_aaaaaaaaa1", "A"), agent("a_aaaaaaaaa2", "A")], prompts: [] }),
    ]);
    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(warnings, []);
    assert.deepEqual(state.agents.map((x) => x.agentId).sort(), ["a_aaaaaaaaa1", "a_aaaaaaaaa2", "a_bbbbbbbbb1"]);
    assert.deepEqual(state.prompts, [], "A's latest save replaced its prompts");
    assert.equal((await stat(join(d, "state.json"))).mode & 0o777, 0o600);
    assert.equal((await stat(d)).mode & 0o777, 0o700);
    assert.equal(existsSync(join(d, "state.lock")), false, "the lock is released");
  });

  it("drops records a shepherd let go of, even under the name of the owner it adopted them from", async () => {
    const d = join(dir, "forget");
    const s = new FileStateStore(d);
    await s.save("OLD", { agents: [agent("a_ddddddddd1", "OLD"), agent("a_ddddddddd2", "OLD")], prompts: [] });
    await s.save("NEW", { agents: [agent("a_ddddddddd1", "NEW")], prompts: [], forgotten: ["a_ddddddddd2"] });
    assert.deepEqual(
      (await s.load()).state.agents.map((a) => [a.agentId, a.owner]),
      [["a_ddddddddd1", "NEW"]],
    );
  });

  it("moves a corrupt file aside with a warning and starts empty", async () => {
    const d = join(dir, "corrupt");
    const s = new FileStateStore(d);
    await s.save("A", { agents: [], prompts: [] });
    await writeFile(join(d, "state.json"), "{ not json");
    const { state, warnings } = await s.load();
    assert.deepEqual(state, { agents: [], prompts: [] });
    assert.match(warnings[0]!, /could not be read .* moved it to .*state\.json\.corrupt-\d+/);
    const aside = (await readdir(d)).find((n) => n.startsWith("state.json.corrupt-"))!;
    assert.equal(await readFile(join(d, aside), "utf8"), "{ not json");
  });

  it("takes over a stale lock file left by an older pi-shepherd that is gone", async () => {
    const d = join(dir, "stale");
    const s = new FileStateStore(d);
    await s.save("A", { agents: [], prompts: [] });
    // Older versions locked with a pid file; one left by a crash is as old as the crash.
    await writeFile(join(d, "state.lock"), "999999999");
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(join(d, "state.lock"), longAgo, longAgo);
    await s.save("A", { agents: [agent("a_ccccccccc1", "A")], prompts: [] });
    assert.equal((await s.load()).state.agents.length, 1);
  });
  it("a failed write never blocks later ones, and warns once per streak of failures", async () => {
    const d = join(dir, "failing");
    const told: string[] = [];
    const s = new FileStateStore(d, { onWarning: (m) => told.push(m) });
    const ids = (n: number) => Array.from({ length: n }, (_, i) => agent(`a_fail00000${i}`, "A"));
    await s.save("A", { agents: ids(1), prompts: [] });
    const file = join(d, "state.json");
    await rm(file);
    await mkdir(file); // EISDIR for every read and write of state.json
    await assert.rejects(s.save("A", { agents: ids(2), prompts: [] }), /EISDIR/);
    await assert.rejects(s.save("A", { agents: ids(3), prompts: [] }), /EISDIR/);

    await rmdir(file);
    await s.save("A", { agents: ids(4), prompts: [] });
    assert.deepEqual(
      (await s.load()).state.agents.map((a) => a.agentId),
      ids(4).map((a) => a.agentId),
      "the save after the fix wrote the latest records",
    );
    assert.equal(told.length, 1, "one warning for the whole streak");
    assert.match(told[0]!, /^pi-shepherd: could not write .*state\.json \(.*EISDIR.*\); will retry on the next change/);

    await rm(file);
    await mkdir(file);
    await assert.rejects(s.save("A", { agents: ids(5), prompts: [] }), /EISDIR/);
    assert.equal(told.length, 2, "a new streak warns again");
    assert.deepEqual(
      (await readdir(d)).filter((n) => n.endsWith(".tmp")),
      [],
      "failed writes leave no temp files",
    );
  });

  it("a failed write's records are carried by the next save, even another owner's", async () => {
    const d = join(dir, "carry");
    const s = new FileStateStore(d);
    await s.save("B", { agents: [], prompts: [] });
    const file = join(d, "state.json");
    await rm(file);
    await mkdir(file);
    await assert.rejects(s.save("A", { agents: [agent("a_carry00001", "A")], prompts: [] }));
    await rmdir(file);
    await s.save("B", { agents: [agent("a_carry00002", "B")], prompts: [] });
    assert.deepEqual((await s.load()).state.agents.map((a) => a.agentId).sort(), ["a_carry00001", "a_carry00002"]);
  });

  describe("the lock between processes", () => {
    const hammerScript = join(repoRoot, "test", "support", "state-hammer.ts");
    const started: Subprocess[] = [];
    after(() => {
      for (const p of started) if (p.exitCode === null && p.signalCode === null && p.pid) process.kill(p.pid, "SIGKILL");
    });
    const run = (d: string, ...args: string[]) => {
      const p = execa(node22, ["--import", "tsx", hammerScript, d, ...args], { cwd: repoRoot, reject: false, buffer: true });
      started.push(p);
      return p;
    };
    const untilLocked = (p: Subprocess) =>
      new Promise<void>((resolve, reject) => {
        let out = "";
        p.stdout!.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("locked\n")) resolve();
        });
        p.once("exit", () => reject(new Error(`holder exited before taking the lock: ${out}`)));
      });
    const outcome = (r: { stdout: unknown; stderr: unknown; exitCode?: number | undefined }) => {
      assert.equal(r.exitCode, 0, String(r.stderr));
      return JSON.parse(String(r.stdout).trim().split("\n").at(-1)!) as Record<string, unknown>;
    };

    it("never takes a live holder's lock, and no owner's records are lost", { timeout: 90_000 }, async () => {
      const d = join(dir, "contend");
      await mkdir(d, { recursive: true });
      // Longer than the old 2 s take-over and than the stale time: only the refreshes keep it.
      const holder = run(d, "hold", "12000");
      await untilLocked(holder);
      const lockMode = (await stat(join(d, "state.lock"))).mode & 0o777;
      assert.equal(lockMode & 0o077, 0, `the lock is private to the user, not ${lockMode.toString(8)}`);
      const rounds = 25;
      const hammers = [1, 2, 3].map((n) => run(d, "hammer", String(n), String(rounds)));
      const held = outcome(await holder);
      assert.equal(held.changedWhileHeld, false, "nobody wrote state.json while the holder held the lock");
      for (const h of await Promise.all(hammers)) {
        const o = outcome(h);
        assert.deepEqual(o.lost, [], `${o.owner} saw records go missing`);
        assert.equal(o.failedSaves, 0, `${o.owner} could not save`);
      }
      const { state } = await new FileStateStore(d).load();
      for (const n of [1, 2, 3]) assert.equal(state.agents.filter((a) => a.owner === `H${n}`).length, rounds, `H${n} kept all its records`);
      assert.equal(existsSync(join(d, "state.lock")), false, "the lock is released");
    });

    it("takes over the lock of a holder that crashed, within the stale time", { timeout: 60_000 }, async () => {
      const d = join(dir, "crashed");
      await mkdir(d, { recursive: true });
      const holder = run(d, "hold", "600000");
      await untilLocked(holder);
      process.kill(holder.pid!, "SIGKILL");
      await holder;
      assert.equal(existsSync(join(d, "state.lock")), true, "the crash left its lock behind");
      const t0 = Date.now();
      const s = new FileStateStore(d);
      await s.save("C", { agents: [agent("a_crash00001", "C")], prompts: [] });
      const took = Date.now() - t0;
      assert.ok(took < 13_000, `took over after ${took} ms, more than the 10 s stale time allows`);
      assert.equal((await s.load()).state.agents.length, 1);
    });
  });

  it("sets aside malformed records with one warning, keeps the good ones, and never lets them reach the file system", async () => {
    const d = join(dir, "hostile");
    await mkdir(d, { recursive: true, mode: 0o700 });
    const good = agent("a_good000001", "A");
    const goodPrompt: PromptRecord = {
      promptId: parsePromptId("p_good000001"),
      agentId: good.agentId,
      submittedAt: "2026-01-01T00:00:00Z",
      settled: { promptId: "p_good000001", agentId: good.agentId, status: "completed", text: "ok" },
    };
    const bad = [
      agent("../../x", "A"),
      { ...agent("a_badpane001", "A"), paneId: "-t foo" },
      { ...agent("a_badlabel01", "A"), label: "\u001b[31mred" },
      { ...agent("a_badstate01", "A"), state: "zombie" },
    ];
    const orphan = { promptId: "p_orphan0001", agentId: "a_badstate01", submittedAt: "2026-01-01T00:00:00Z" };
    const badStatus = { promptId: "p_badstat001", agentId: good.agentId, submittedAt: "x", settled: { status: "exploded" } };
    await writeFile(join(d, "state.json"), JSON.stringify({ version: 1, agents: [good, ...bad], prompts: [goodPrompt, orphan, badStatus] }));

    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(state, { agents: [good], prompts: [goodPrompt], delegations: [] });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^pi-shepherd: set aside 6 records of .*state\.json/);
    for (const why of [
      "agentId is not a well-formed agent id",
      "paneId",
      "label",
      "state is not a known state",
      "its agent record was set aside",
      "settled has no known status",
    ]) {
      assert.ok(warnings[0]!.includes(why), `the warning says why: ${why}`);
    }
    assert.ok(!warnings[0]!.includes("\u001b"), "the warning does not echo the hostile label");
    const aside = (await readdir(d)).filter((n) => /^state\.rejected-\d+\.json$/.test(n));
    assert.equal(aside.length, 1);
    assert.equal((await stat(join(d, aside[0]!))).mode & 0o777, 0o600);
    const kept = JSON.parse(await readFile(join(d, aside[0]!), "utf8")) as { rejected: { record: unknown }[] };
    assert.equal(kept.rejected.length, 6, "every set-aside record is kept for the user");
    const onDisk = JSON.parse(await readFile(join(d, "state.json"), "utf8")) as { agents: AgentRecord[] };
    assert.deepEqual(
      onDisk.agents.map((a) => a.agentId),
      [good.agentId],
      "not written back",
    );
    assert.deepEqual((await new FileStateStore(d).load()).warnings, [], "reported once");
  });

  it("keeps worktrees, baselines and evidence of our own shapes, and sets aside forged ones that would steer git", async () => {
    const d = join(dir, "git-records");
    await mkdir(d, { recursive: true, mode: 0o700 });
    const oid = "0123456789abcdef0123456789abcdef01234567";
    const wtOf = (id: string) => ({
      path: `/home/u/.pi/agent/pi-shepherd/worktrees/${id}`,
      branch: `shepherd/x-${id.slice(2)}`,
      repoRoot: "/home/u/repo",
      base: oid,
      leftBehind: 0,
    });
    const good = { ...agent("a_wtgood0001", "A"), worktree: wtOf("a_wtgood0001") };
    // A resumed isolated sheep holds the worktree made for the sheep whose conversation it continues.
    const resumed = { ...agent("a_wtresume01", "B"), resumedFrom: "a_wtorig0001", worktree: wtOf("a_wtorig0001") };
    const baseline = { root: "/home/u/repo", commit: oid, tree: oid, takenAt: "2026-01-01T00:00:00Z" };
    const evidence = {
      baseline,
      after: oid,
      afterAt: "2026-01-01T00:00:01Z",
      files: [{ path: "a b.txt", status: "modified" as const, insertions: 1, deletions: 0 }],
      fileCount: 1,
      insertions: 1,
      deletions: 0,
      patchPath: "/home/u/.pi/agent/pi-shepherd/sheep/a_wtgood0001/evidence/p_wtgood0001.patch",
      patch: "",
      truncated: false,
      shared: false,
    };
    const goodPrompt: PromptRecord = {
      promptId: parsePromptId("p_wtgood0001"),
      agentId: good.agentId,
      submittedAt: "2026-01-01T00:00:00Z",
      // A follow-up's baseline on a host names it.
      baseline: { ...baseline, host: "gpu" },
      settled: { promptId: "p_wtgood0001", agentId: good.agentId, status: "completed", text: "ok", evidence },
    };
    const bad = [
      { ...agent("a_wtbranch01", "A"), worktree: { ...wtOf("a_wtbranch01"), branch: "--delete" } },
      { ...agent("a_wtpath0001", "A"), worktree: { ...wtOf("a_wtpath0001"), path: "/home/u/repo" } },
      { ...agent("a_wtother001", "A"), worktree: wtOf("a_wtgood0001") },
      { ...agent("a_wtdots0001", "A"), worktree: { ...wtOf("a_wtdots0001"), path: "/x/worktrees/../../etc/worktrees/a_wtdots0001" } },
      { ...agent("a_wtbase0001", "A"), worktree: { ...wtOf("a_wtbase0001"), base: "--output=/tmp/x" } },
    ];
    const badPrompts = [
      { promptId: "p_wttree0001", agentId: good.agentId, submittedAt: "x", baseline: { ...baseline, tree: "-p" } },
      { promptId: "p_wthost0001", agentId: good.agentId, submittedAt: "x", baseline: { ...baseline, host: "-oProxyCommand=x" } },
      {
        promptId: "p_wtevid0001",
        agentId: good.agentId,
        submittedAt: "x",
        settled: { promptId: "p_wtevid0001", agentId: good.agentId, status: "completed", evidence: { ...evidence, files: "all" } },
      },
    ];
    await writeFile(join(d, "state.json"), JSON.stringify({ version: 1, agents: [good, resumed, ...bad], prompts: [goodPrompt, ...badPrompts] }));
    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(state, { agents: [good, resumed], prompts: [goodPrompt], delegations: [] });
    for (const why of [
      "worktree.branch is not a branch the shepherd makes",
      "worktree.path is not this sheep's worktree path (x3)",
      "worktree.base is not an object id",
      "baseline.tree is not an object id",
      "host is not well-formed",
      "evidence.files is not a file list",
    ]) {
      assert.ok(warnings[0]!.includes(why), `the warning says why: ${why}`);
    }
  });

  it("sets aside forged fields of the async herd: queues, marks, steers, requestIds, background delegations", async () => {
    const d = join(dir, "hostile-async");
    await mkdir(d, { recursive: true, mode: 0o700 });
    const good = { ...agent("a_asyncgood1", "A"), queue: ["p_queued0001"], messagesRead: 2, messagesHandled: 3 };
    const goodPrompt: PromptRecord = {
      promptId: parsePromptId("p_queued0001"),
      agentId: good.agentId,
      submittedAt: "2026-01-01T00:00:00Z",
      notify: true,
      requestId: "r-1",
      delivered: { by: "push", at: "2026-01-01T00:00:01Z" },
      steerIds: ["s_steer00001"],
      delegationId: "d_deleg00001",
      firstLine: "look at the tests",
    };
    const goodDelegation: DelegationRecord = {
      delegationId: "d_deleg00001",
      owner: "A",
      mode: "chain",
      keepOpen: false,
      createdAt: "2026-01-01T00:00:00Z",
      items: [{ agent: "echo", task: "t", agentId: good.agentId, promptId: "p_queued0001", status: "completed", text: "ok", step: 1 }],
      done: true,
    };
    const badAgents = [
      { ...agent("a_badqueue01", "A"), queue: ["../../etc"] },
      { ...agent("a_badqueue02", "A"), queue: Array.from({ length: 9 }, (_, i) => `p_queue0000${i}`) },
      { ...agent("a_badcount01", "A"), messagesRead: -1 },
    ];
    const badPrompts = [
      { ...goodPrompt, promptId: "p_badnotify1", notify: "yes" },
      { ...goodPrompt, promptId: "p_badmark001", delivered: { by: "carrier pigeon", at: "x" } },
      { ...goodPrompt, promptId: "p_badsteer01", steerIds: ["s_../../x"] },
      { ...goodPrompt, promptId: "p_badreq0001", requestId: "r".repeat(300) },
      { ...goodPrompt, promptId: "p_badline001", firstLine: "x".repeat(201) },
    ];
    const badDelegations = [
      { ...goodDelegation, delegationId: "d_../../x" },
      { ...goodDelegation, delegationId: "d_badmode001", mode: "swarm" },
      { ...goodDelegation, delegationId: "d_baditem001", items: [{ agent: "echo", task: "t", agentId: "-t x" }] },
      { ...goodDelegation, delegationId: "d_noitems001", items: [] },
    ];
    await writeFile(
      join(d, "state.json"),
      JSON.stringify({ version: 1, agents: [good, ...badAgents], prompts: [goodPrompt, ...badPrompts], delegations: [goodDelegation, ...badDelegations] }),
    );
    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(state, { agents: [good], prompts: [goodPrompt], delegations: [goodDelegation] });
    assert.match(warnings[0]!, /^pi-shepherd: set aside 12 records/);
    for (const why of [
      "queue is not well-formed",
      "messagesRead",
      "notify",
      "delivered",
      "steerIds",
      "requestId",
      "firstLine",
      "delegationId",
      "mode",
      "an item's agentId",
      "items is not a list",
    ]) {
      assert.ok(warnings[0]!.includes(why), `the warning says why: ${why}`);
    }
  });

  it("keeps a background delegation's task reservations only as {item, key, budget} of one of its tasks: anything else sets the record aside", async () => {
    const d = join(dir, "hostile-reservations");
    await mkdir(d, { recursive: true, mode: 0o700 });
    const delegation = (delegationId: string, reservations: unknown) => ({
      delegationId,
      owner: "A",
      mode: "parallel",
      keepOpen: false,
      createdAt: "2026-01-01T00:00:00Z",
      items: [
        { agent: "echo", task: "one" },
        { agent: "echo", task: "two" },
      ],
      reservations,
    });
    const good = delegation("d_reserved01", [
      { item: 0, key: "b_reserve001", budget: { tokens: 2000 } },
      { item: 1, key: "b_reserve002", budget: { tokens: 3000, costUsd: 0.5 } },
    ]);
    const bad = [
      delegation("d_badres0001", { item: 0, key: "b_reserve001", budget: { tokens: 1 } }),
      delegation("d_badres0002", [{ item: 2, key: "b_reserve001", budget: { tokens: 1 } }]),
      delegation("d_badres0003", [{ item: -1, key: "b_reserve001", budget: { tokens: 1 } }]),
      delegation("d_badres0004", [
        { item: 0, key: "b_reserve001", budget: { tokens: 1 } },
        { item: 0, key: "b_reserve002", budget: { tokens: 1 } },
      ]),
      delegation("d_badres0005", [{ item: 0, key: "../../etc/passwd", budget: { tokens: 1 } }]),
      delegation("d_badres0006", [{ item: 0, key: "b_reserve001", budget: { tokens: -5 } }]),
      delegation("d_badres0007", [{ item: 0, key: "b_reserve001", budget: { tokens: 1e300 } }]),
      delegation("d_badres0008", [{ item: 0, key: "b_reserve001", budget: { tokens: 1, sheep: 2 } }]),
      delegation("d_badres0009", [{ item: 0, key: "b_reserve001", budget: {} }]),
      delegation("d_badres0010", [{ item: 0, key: "b_reserve001", budget: { tokens: 1 }, extra: true }]),
      delegation("d_badres0011", [{ item: 0.5, key: "b_reserve001", budget: { tokens: 1 } }]),
      delegation("d_badres0012", [
        { item: 0, key: "b_reserve001", budget: { tokens: 1 } },
        { item: 1, key: "b_reserve002", budget: { tokens: 1 } },
        { item: 1, key: "b_reserve003", budget: { tokens: 1 } },
      ]),
    ];
    await writeFile(join(d, "state.json"), JSON.stringify({ version: 1, agents: [], prompts: [], delegations: [good, ...bad] }));
    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(state.delegations, [good]);
    assert.match(warnings[0]!, new RegExp(`^pi-shepherd: set aside ${bad.length} records`));
    assert.match(warnings[0]!, /reservation/);
  });

  it("does not write a record a load would set aside, and says so once", async () => {
    const d = join(dir, "unwritable");
    const told: string[] = [];
    const s = new FileStateStore(d, { onWarning: (m) => told.push(m) });
    const long = { ...agent("a_longlabel1", "A"), label: "x".repeat(65) };
    const mine = {
      agents: [agent("a_fine000001", "A"), long],
      prompts: [{ promptId: parsePromptId("p_longlabel1"), agentId: long.agentId, submittedAt: "x" }],
    };
    await s.save("A", mine);
    await s.save("A", mine);
    const { state, warnings } = await s.load();
    assert.deepEqual(
      state.agents.map((a) => a.agentId),
      ["a_fine000001"],
    );
    assert.deepEqual(state.prompts, []);
    assert.deepEqual(warnings, [], "nothing for a load to set aside");
    assert.equal(told.length, 1, "one warning for the same records saved twice");
    assert.match(told[0]!, /^pi-shepherd: did not write 2 records to .*state\.json .*label/);
  });

  it("a pruning shepherd never deletes outside the state directory for a record naming one", async () => {
    const agentDir = join(dir, "prune-agent");
    const victim = join(agentDir, "x"); // where sheepDir(agentDir, "../../x") points
    await mkdir(victim, { recursive: true });
    await writeFile(join(victim, "precious.txt"), "keep me");
    const goodDir = sheepDir(agentDir, "a_prune00001");
    await mkdir(goodDir, { recursive: true });
    await writeFile(join(goodDir, "status.json"), "{}");
    await mkdir(stateDir(agentDir), { recursive: true });
    const gone = (id: string) => ({ ...agent(id, "dead-shepherd"), paneId: "%77" });
    await writeFile(join(stateDir(agentDir), "state.json"), JSON.stringify({ version: 1, agents: [gone("../../x"), gone("a_prune00001")], prompts: [] }));

    const world = new MemoryWorld();
    const host = new LocalSheepFiles({
      agentDir,
      piCommand: ["pi"],
      nodePath: "/node",
      launcherPath: "/launcher.mjs",
      reportExitPath: "/report-exit.sh",
      sheepExtension: "/sheep.ts",
      env: {},
      depth: 0,
    });
    const shepherd = new Shepherd({ runtime: world.runtime, files: host, owner: "me", store: new FileStateStore(stateDir(agentDir)), ownerAlive: () => false });
    const report = await shepherd.attach();
    await shepherd.prune();
    shepherd.dispose();
    assert.equal(await readFile(join(victim, "precious.txt"), "utf8").catch(() => "deleted"), "keep me");
    assert.deepEqual(report.pruned, ["a_prune00001"], "the well-formed record was adopted and pruned");
    assert.equal(existsSync(join(goodDir, "status.json")), false, "pruning did clean the well-formed sheep's files");
  });

  it("bounds what it writes: 64 closed sheep in all, 32 settled prompts per sheep, every unsettled one", async () => {
    const d = join(dir, "bounded");
    const s = new FileStateStore(d);
    const at = (minute: number, second: number) => `2026-01-01T00:${String(minute).padStart(2, "0")}:${String(second).padStart(2, "0")}Z`;
    const closed = (id: string, owner: string, createdAt: string): AgentRecord => ({ ...agent(id, owner), createdAt, state: "closed" });
    const settled = (promptId: string, agentId: string, submittedAt: string): PromptRecord => ({
      promptId: parsePromptId(promptId),
      agentId: parseAgentId(agentId),
      submittedAt,
      settled: { promptId, agentId, status: "completed", text: "x".repeat(100) },
    });
    // B's 30 closed sheep are older than A's 50: 14 of B's fit in the window.
    const bAgents = Array.from({ length: 30 }, (_, i) => closed(`a_b${String(i).padStart(9, "0")}`, "B", at(0, i)));
    const bPrompts = bAgents.map((a, i) => settled(`p_b${String(i).padStart(9, "0")}`, a.agentId, at(0, i)));
    await s.save("B", { agents: bAgents, prompts: bPrompts });
    const aClosed = Array.from({ length: 50 }, (_, i) => closed(`a_a${String(i).padStart(9, "0")}`, "A", at(1, i)));
    const live: AgentRecord = { ...agent("a_live000001", "A"), state: "working", activePromptId: parsePromptId("p_live000099") };
    const liveSettled = Array.from({ length: 40 }, (_, i) => settled(`p_live0000${String(i).padStart(2, "0")}`, live.agentId, at(2, i)));
    const unsettled: PromptRecord = { promptId: parsePromptId("p_live000099"), agentId: live.agentId, submittedAt: at(3, 0) };
    const closedPrompts = aClosed.flatMap((a, i) =>
      Array.from({ length: 35 }, (_, k) => settled(`p_a${String(i).padStart(3, "0")}${String(k).padStart(6, "0")}`, a.agentId, at(4, k))),
    );
    await s.save("A", { agents: [...aClosed, live], prompts: [...liveSettled, unsettled, ...closedPrompts] });

    const { state } = await s.load();
    const closedKept = state.agents.filter((a) => a.state === "closed");
    assert.equal(closedKept.length, 64);
    assert.deepEqual(
      closedKept.map((a) => a.agentId).sort(),
      [...aClosed, ...bAgents.slice(16)].map((a) => a.agentId).sort(),
      "the newest closed records, whoever owns them",
    );
    assert.ok(
      state.agents.some((a) => a.agentId === live.agentId),
      "a live sheep is always kept",
    );
    const of = (id: string) => state.prompts.filter((p) => p.agentId === id);
    assert.deepEqual(
      of(live.agentId)
        .map((p) => p.promptId)
        .sort(),
      [...liveSettled.slice(8), unsettled].map((p) => p.promptId).sort(),
      "the unsettled prompt and the 32 newest settled ones",
    );
    for (const a of aClosed) assert.equal(of(a.agentId).length, 32);
    for (const a of bAgents.slice(0, 16)) assert.equal(of(a.agentId).length, 0, "a dropped sheep's prompts go with it");
    assert.equal(state.prompts.length, 33 + 50 * 32 + 14);
  });

  it("bounds its texts in bytes: 33 results of 16 MiB are saved, each at most 1 MiB, all within 16 MiB, the oldest cut to 4 KiB saying where each is whole; another sheep's record is saved too (issue 31, item 6)", async () => {
    const d = join(dir, "texts");
    const s = new FileStateStore(d);
    // One string shared by every record: 33 of them whole are more than a JSON text may be (Invalid string length).
    const big = "r".repeat(16 * 1024 * 1024);
    const sheep = [agent("a_huge000001", "A"), agent("a_huge000002", "A")];
    const prompts: PromptRecord[] = Array.from({ length: 33 }, (_, i) => {
      const promptId = parsePromptId(`p_huge${String(i).padStart(6, "0")}`);
      const agentId = sheep[i % 2]!.agentId;
      return {
        promptId,
        agentId,
        submittedAt: `2026-01-01T00:00:${String(i).padStart(2, "0")}Z`,
        settled: { promptId, agentId, status: "completed", text: big, sessionPath: `/sessions/${agentId}.jsonl` },
      };
    });
    await s.save("A", { agents: sheep, prompts });
    await s.save("B", { agents: [agent("a_other00001", "B")], prompts: [] });
    const size = (await stat(join(d, "state.json"))).size;
    assert.ok(size <= 16 * 1024 * 1024 + 64 * 1024, `state.json is ${size} bytes`);
    const { state } = await s.load();
    assert.deepEqual(state.agents.map((a) => a.agentId).sort(), ["a_huge000001", "a_huge000002", "a_other00001"], "every sheep's record saved");
    const texts = state.prompts.sort((a, b) => (a.submittedAt < b.submittedAt ? -1 : 1)).map((p) => p.settled!.text!);
    assert.equal(texts.length, 33);
    for (const t of texts) assert.ok(Buffer.byteLength(t) <= 1024 * 1024 + 1024, `${Buffer.byteLength(t)} bytes`);
    assert.match(
      texts[0]!,
      /^r{4096}\n… \[cut in state\.json at 4096 of its 16777216 bytes; the whole answer is in the sheep's session file \/sessions\/a_huge000001\.jsonl: action "read" of a_huge000001 shows it\]$/,
    );
    assert.match(texts[32]!, /^r{1048576}\n… \[cut in state\.json at 1048576 of its 16777216 bytes/, "the newest kept at the per-result bound");
    assert.equal(prompts[0]!.settled!.text, big, "the records in memory stay whole");
  });
});
