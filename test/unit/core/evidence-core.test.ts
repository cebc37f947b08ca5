/**
 * The core's side of evidence and worktrees, on an in-memory runtime, host and workspace: when a
 * baseline is taken, that a prompt settles with its evidence exactly once, and the rules for
 * keeping, removing and landing an isolated sheep's worktree.
 */
import assert from "node:assert/strict";
import { pruneText } from "../../../src/texts/format.ts";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { MAX_CLOSED_KEPT, Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorkspace } from "../../support/memory-workspace.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import { syncText } from "../../../src/texts/format.ts";
import { git, makeRepo, status, writeFiles } from "../../support/git-repo.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup(o: { evidence?: boolean } = {}) {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const workspace = new MemoryWorkspace();
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: "me",
    clock,
    livenessIntervalMs: 1000,
    workspace,
    ...(o.evidence !== undefined ? { evidence: o.evidence } : {}),
  });
  // The memory host keeps the order of deliveries next to the workspace's calls.
  const submit = world.files.submit;
  world.files.submit = async (agentId, delivery) => {
    workspace.calls.push(
      `submit ${delivery.kind === "prompt" ? delivery.promptId : delivery.kind === "steer" ? delivery.steerId : delivery.kind === "renew" ? delivery.renewId : delivery.interruptId}`,
    );
    return submit(agentId, delivery);
  };
  return { world, clock, workspace, shepherd };
}

type S = ReturnType<typeof setup>;
const start = (s: S, cwd = "/repo/pkg", extra: { isolate?: boolean; label?: string } = {}) => s.shepherd.start({ definition: def, cwd, ...extra });

describe("core: evidence", () => {
  it("takes the baseline before the prompt reaches the sheep, and the result carries the evidence", async () => {
    const s = setup();
    const a = await start(s);
    const p = await s.shepherd.prompt(a.agentId, "work");
    assert.deepEqual(s.workspace.calls, ["baseline /repo/pkg", `submit ${p.promptId}`]);
    s.world.answer(a.agentId, p.promptId, "done");
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.status, "completed");
    assert.equal(r!.evidence?.insertions, 2);
    assert.equal(r!.evidence?.shared, true, "a sheep in the user's checkout says so");
    assert.equal(r!.evidence?.patchPath, `/evidence/${a.agentId}/${p.promptId}.patch`);
    const latest = await s.shepherd.diff(a.agentId);
    assert.equal(latest.promptId, p.promptId);
    assert.deepEqual(latest.evidence, r!.evidence);
  });

  it("outside git there is no evidence and no error; diff says why", async () => {
    const s = setup();
    const a = await start(s, "/tmp/plain");
    await assert.rejects(s.shepherd.diff(a.agentId), /^ShepherdError: \[no_evidence\] .*has not finished a prompt yet/);
    const p = await s.shepherd.prompt(a.agentId, "work");
    await assert.rejects(s.shepherd.diff(a.agentId), /^ShepherdError: \[no_evidence\] .*still running/);
    s.world.answer(a.agentId, p.promptId, "done");
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.status, "completed");
    assert.equal("evidence" in r!, false);
    assert.equal("evidenceError" in r!, false);
    await assert.rejects(s.shepherd.diff(a.agentId), /^ShepherdError: \[no_evidence\] .*not in a git working tree/);
  });

  it("the setting off takes no baseline at all", async () => {
    const s = setup({ evidence: false });
    const a = await start(s);
    await s.shepherd.prompt(a.agentId, "work");
    assert.deepEqual(
      s.workspace.calls.filter((c) => c.startsWith("baseline")),
      [],
    );
  });

  it("a failed baseline costs only the evidence: the prompt is delivered and the result says why", async () => {
    const s = setup();
    const a = await start(s);
    s.workspace.failBaseline = true;
    const p = await s.shepherd.prompt(a.agentId, "work");
    assert.equal(s.world.mem(a.agentId).inbox.get(p.promptId), "work");
    s.world.answer(a.agentId, p.promptId, "done");
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.status, "completed");
    assert.match(r!.evidenceError!, /git add failed.*no baseline was taken/);
  });

  it("a second prompt in the same turn is refused while the first one's baseline is taken", async () => {
    const s = setup();
    const a = await start(s);
    const [one, two] = await Promise.allSettled([s.shepherd.prompt(a.agentId, "one"), s.shepherd.prompt(a.agentId, "two")]);
    assert.equal(one.status, "fulfilled");
    assert.equal(two.status, "rejected");
    assert.match(String((two as PromiseRejectedResult).reason), /\[prompt_pending\]/);
    assert.equal(s.world.mem(a.agentId).inbox.size, 1);
  });

  it("settles once with one diff although a wait, the widget and status ask at the same time", async () => {
    const s = setup();
    const a = await start(s);
    const p = await s.shepherd.prompt(a.agentId, "work");
    let open!: () => void;
    s.workspace.gate = new Promise((r) => (open = r));
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    await settle();
    s.world.answer(a.agentId, p.promptId, "done");
    await settle();
    const widget = s.shepherd.refreshFromFiles();
    const status = s.shepherd.status(a.agentId);
    await settle();
    open();
    const [[r], herd, st] = await Promise.all([waiting, widget, status]);
    assert.equal(s.workspace.calls.filter((c) => c.startsWith("diff")).length, 1, "one diff");
    assert.equal(r!.evidence?.fileCount, 1);
    assert.equal(herd[0]!.state, "idle");
    assert.equal(st.state, "idle");
    const [again] = await s.shepherd.wait([p.promptId], { timeoutSec: 0 });
    assert.deepEqual(again, r);
  });

  it("a follow-up queued behind a running prompt starts where that prompt ended", async () => {
    const s = setup();
    const a = await start(s);
    const p1 = await s.shepherd.prompt(a.agentId, "one");
    const p2 = await s.shepherd.prompt(a.agentId, "two", { deliverAs: "followUp" });
    assert.deepEqual(
      s.workspace.calls.filter((c) => c.startsWith("baseline")),
      ["baseline /repo/pkg"],
      "no baseline of its own: while it waits, the sheep is still changing things for the first",
    );
    s.world.answer(a.agentId, p1.promptId, "first");
    const [r1] = await s.shepherd.wait([p1.promptId], { timeoutSec: 5 });
    s.world.answer(a.agentId, p2.promptId, "second");
    const [r2] = await s.shepherd.wait([p2.promptId], { timeoutSec: 5 });
    assert.equal(r2!.evidence?.baseline.tree, r1!.evidence?.after, "the second's baseline is the first's end");
    assert.equal(r2!.evidence?.baseline.commit, r1!.evidence?.afterCommit);
  });

  it("a prompt cancelled by close still records what the sheep changed", async () => {
    const s = setup();
    const a = await start(s);
    const p = await s.shepherd.prompt(a.agentId, "work");
    const closed = await s.shepherd.close(a.agentId);
    assert.deepEqual(closed.cancelledPromptIds, [p.promptId]);
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 0 });
    assert.equal(r!.status, "cancelled");
    assert.equal(r!.evidence?.fileCount, 1);
  });
});

describe("core: isolated sheep", () => {
  it("runs in its worktree, says so in status, and its evidence is not shared", async () => {
    const s = setup();
    const a = await start(s, "/repo/pkg", { isolate: true });
    assert.equal(a.cwd, `/wt/worktrees/${a.agentId}`);
    assert.equal(a.worktree?.branch, `shepherd/${a.agentId.slice(2)}`);
    assert.deepEqual((await s.shepherd.status(a.agentId)).worktree, a.worktree);
    const p = await s.shepherd.prompt(a.agentId, "work");
    assert.ok(s.workspace.calls.includes(`baseline /wt/worktrees/${a.agentId}`));
    s.world.answer(a.agentId, p.promptId, "done");
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.evidence?.shared, false);
  });

  it("isolation outside a repository fails and starts nothing", async () => {
    const s = setup();
    await assert.rejects(start(s, "/tmp/plain", { isolate: true }), /not_a_repository/);
    assert.deepEqual(
      s.world.calls.filter((c) => c.startsWith("create")),
      [],
    );
  });

  it("a sheep that never starts leaves no worktree", async () => {
    const s = setup();
    s.world.onLaunch = "exit";
    await assert.rejects(start(s, "/repo", { isolate: true }), /^ShepherdError: \[start_failed\]/);
    assert.equal(s.workspace.removed.length, 1);
  });

  it("close keeps the worktree; removing one with work needs force, and is refused before anything closes", async () => {
    const s = setup();
    const a = await start(s, "/repo", { isolate: true });
    const path = a.worktree!.path;
    s.workspace.dirty(path);
    await assert.rejects(
      s.shepherd.close(a.agentId, { removeWorktree: true }),
      /^ShepherdError: \[dirty_worktree\] .*uncommitted changes \(a\.txt\); nothing was closed/,
    );
    assert.equal((await s.shepherd.status(a.agentId)).state, "idle", "still open");
    const kept = await s.shepherd.close(a.agentId);
    assert.deepEqual(kept.worktree, { path, branch: a.worktree!.branch, removed: false });
    assert.deepEqual(s.workspace.removed, []);
    await assert.rejects(s.shepherd.close(a.agentId, { removeWorktree: true }), /dirty_worktree/, "closed or not, work needs force");
    const removed = await s.shepherd.close(a.agentId, { removeWorktree: true, force: true });
    assert.deepEqual([removed.alreadyClosed, removed.worktree?.removed], [true, true]);
    assert.deepEqual(s.workspace.removed, [path]);
    assert.equal((await s.shepherd.close(a.agentId, { removeWorktree: true })).worktree, undefined, "a third time there is nothing left");
  });

  it("a clean worktree is removed on request, without force", async () => {
    const s = setup();
    const a = await start(s, "/repo", { isolate: true });
    const r = await s.shepherd.close(a.agentId, { removeWorktree: true });
    assert.equal(r.worktree?.removed, true);
    assert.deepEqual(s.workspace.removed, [a.worktree!.path]);
  });

  it("prune removes only worktrees that hold nothing; a gone sheep with work stays, closed", async () => {
    const s = setup();
    const clean = await start(s, "/repo", { isolate: true, label: "clean" });
    const busy = await start(s, "/repo", { isolate: true, label: "busy" });
    const gone = await start(s, "/repo", { isolate: true, label: "gone" });
    s.workspace.dirty(busy.worktree!.path);
    s.workspace.dirty(gone.worktree!.path, ["x.txt"]);
    await s.shepherd.close(clean.agentId);
    await s.shepherd.close(busy.agentId);
    s.world.killPane(gone.agentId);
    const out = await s.shepherd.prune();
    assert.deepEqual(out.removed, [gone.agentId]);
    assert.deepEqual(
      out.kept.map((k) => [k.label, k.reason]),
      [
        ["busy", "uncommitted changes (a.txt)"],
        ["gone", "uncommitted changes (x.txt)"],
      ],
    );
    assert.deepEqual(s.workspace.removed, [clean.worktree!.path]);
    // Item 22: it says what it removed, not "Nothing to prune".
    assert.deepEqual(out.forgotten, [{ agentId: clean.agentId, label: "clean" }]);
    assert.deepEqual(out.worktrees, [{ agentId: clean.agentId, label: "clean", path: clean.worktree!.path, branch: clean.worktree!.branch }]);
    const text = pruneText(out);
    assert.doesNotMatch(text, /Nothing to prune/);
    assert.match(text, new RegExp(`Forgot 1 closed: clean \\(${clean.agentId}\\)\\.`));
    assert.ok(text.includes(`Removed the worktree of clean (${clean.agentId}) at ${clean.worktree!.path} and its branch ${clean.worktree!.branch}.`));
    assert.equal(s.shepherd.registry.agents.has(clean.agentId), false);
    assert.equal(s.shepherd.registry.agents.get(gone.agentId)?.state, "closed");
    assert.equal((await s.shepherd.status(busy.agentId)).state, "closed");
  });

  it("closed sheep that kept worktrees are never dropped by the bound on closed records", async () => {
    const s = setup();
    const first = await start(s, "/repo", { isolate: true, label: "keeper" });
    await s.shepherd.close(first.agentId);
    for (let i = 0; i < MAX_CLOSED_KEPT + 2; i++) {
      const a = await start(s, "/tmp/plain", { label: `plain-${i}` });
      await s.shepherd.close(a.agentId);
    }
    assert.equal(s.shepherd.registry.agents.get(first.agentId)?.worktree?.path, first.worktree!.path);
  });

  it("land waits for the sheep's prompt, refuses a sheep without a worktree, and lands a closed one", async () => {
    const s = setup();
    const a = await start(s, "/repo", { isolate: true });
    const plain = await start(s, "/repo");
    const p = await s.shepherd.prompt(a.agentId, "work");
    await assert.rejects(s.shepherd.land(a.agentId, { squash: false }), /^ShepherdError: \[prompt_pending\] .*wait for it, then land/);
    await assert.rejects(s.shepherd.land(plain.agentId, { squash: false }), /^ShepherdError: \[invalid_params\] .*has no worktree of its own/);
    s.world.answer(a.agentId, p.promptId, "done");
    await s.shepherd.close(a.agentId);
    const landed = await s.shepherd.land(a.agentId, { squash: true });
    assert.deepEqual([landed.landed, landed.label, landed.squash], [true, a.label, true]);
    assert.ok(s.workspace.calls.includes(`land ${a.worktree!.path} squash`));
  });
});

describe("core: sync on real repositories", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sync-core-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function realSetup() {
    const world = new MemoryWorld();
    const workspace = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
    const shepherd = new Shepherd({
      runtime: world.runtime,
      files: world.files,
      owner: "me",
      clock: new FakeClock(),
      livenessIntervalMs: 1000,
      workspace,
      evidence: false,
    });
    return { world, shepherd };
  }

  async function userSide(repo: string) {
    return { head: await git(repo, "rev-parse", "HEAD"), index: await readFile(join(repo, ".git", "index")), status: await status(repo) };
  }

  it("refuses while the sheep works; a clean sync says what came in; the user's checkout is untouched", async () => {
    const s = realSetup();
    const repo = await makeRepo(join(dir, "clean"), { "a.txt": "a\n", "b.txt": "b\n" });
    const a = await s.shepherd.start({ definition: def, cwd: repo, isolate: true, label: "fixer" });
    const p = await s.shepherd.prompt(a.agentId, "work");
    await assert.rejects(s.shepherd.sync(a.agentId), /^ShepherdError: \[prompt_pending\] .*wait for it, then sync\./);
    await writeFiles(a.worktree!.path, { "a.txt": "the sheep's\n" });
    s.world.answer(a.agentId, p.promptId, "done");
    await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    await writeFiles(repo, { "b.txt": "the person's\n" });
    await git(repo, "commit", "--quiet", "-am", "person");
    const before = await userSide(repo);
    const synced = await s.shepherd.sync(a.agentId);
    assert.deepEqual(await userSide(repo), before);
    assert.deepEqual([synced.synced, synced.label, synced.conflicts, synced.files.map((f) => f.path)], [true, "fixer", [], ["b.txt"]]);
    const text = syncText(synced);
    assert.match(
      text,
      /^Synced main \([0-9a-f]{10}\) into the worktree of fixer \(a_\w+\) at .*: \+1 −1 in 1 file came in\. Its uncommitted files were committed on shepherd\/fixer-\w+ first\. Your checkout was not touched\.\n {2}modified {3}b\.txt \+1 −1$/,
    );
    assert.equal(await readFile(join(a.worktree!.path, "b.txt"), "utf8"), "the person's\n");
    const next = await s.shepherd.prompt(a.agentId, "next task");
    assert.equal(s.world.mem(a.agentId).inbox.get(next.promptId), "next task", "no conflicts: the prompt goes as written");
  });

  it("a conflicting sync leaves the conflicts in the worktree, and the sheep's next prompt names them", async () => {
    const s = realSetup();
    const repo = await makeRepo(join(dir, "conflict"), { "src/math.js": "one\ntwo\nthree\n" });
    const a = await s.shepherd.start({ definition: def, cwd: repo, isolate: true, label: "mathy" });
    await writeFiles(a.worktree!.path, { "src/math.js": "one\nthe sheep's two\nthree\n" });
    await writeFiles(repo, { "src/math.js": "one\nthe person's two\nthree\n" });
    await git(repo, "commit", "--quiet", "-am", "person");
    await assert.rejects(
      s.shepherd.land(a.agentId, { squash: false }),
      /\[land_refused\] .*conflicts in: src\/math\.js\. Bring main into the sheep's worktree with action "sync"/,
    );
    const before = await userSide(repo);
    const synced = await s.shepherd.sync(a.agentId);
    assert.deepEqual(await userSide(repo), before, "HEAD, index and status of the user's checkout are as they were");
    assert.deepEqual(synced.conflicts, ["src/math.js"]);
    assert.match(syncText(synced), /with conflicts in: src\/math\.js\..*\nThe merge is left in progress there/);
    assert.match(await readFile(join(a.worktree!.path, "src", "math.js"), "utf8"), /^<<<<<<< HEAD\nthe sheep's two\n=======\nthe person's two\n>>>>>>> /m);
    const p = await s.shepherd.prompt(a.agentId, "carry on");
    const sent = s.world.mem(a.agentId).inbox.get(p.promptId)!;
    assert.match(sent, /^\[pi-shepherd\] Your worktree has a merge in progress .* with conflicts in: src\/math\.js\. Resolve them first/);
    assert.ok(sent.endsWith("\n\ncarry on"), "the prompt itself follows, as written");
  });
});
