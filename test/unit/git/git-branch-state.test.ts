/**
 * Where an isolated sheep's branch stands, on real git: nothing yet, work uncommitted, ahead,
 * behind, conflicts left by a sync, and landed (merged or squashed); reading it changes nothing.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import type { Worktree } from "../../../src/ports/workspace.ts";
import { git, makeRepo, status, writeFiles } from "../../support/git-repo.ts";

describe("GitWorkspace.branchState", () => {
  let dir: string;
  let repo: string;
  let ws: GitWorkspace;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-branch-"));
    repo = await makeRepo(join(dir, "repo"), { "a.txt": "one\n", "b.txt": "bee\n" });
    ws = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const isolate = async (label: string, agentId: string): Promise<Worktree> => (await ws.isolate({ cwd: repo, agentId, label })).worktree;
  const pick = async (wt: Worktree) => {
    const s = (await ws.branchState(wt))!;
    return { ahead: s.ahead, behind: s.behind, conflicts: s.conflicts, uncommitted: s.uncommitted, worked: s.worked, landed: s.landed };
  };

  it("a fresh branch holds nothing; uncommitted work is work, not landed; landing (merge) makes it landed; the user's commits make it behind", async () => {
    const wt = await isolate("merge", "a_0000000001");
    assert.deepEqual(await pick(wt), { ahead: 0, behind: 0, conflicts: [], uncommitted: 0, worked: false, landed: false });
    await writeFiles(wt.path, { "c.txt": "sea\n" });
    assert.deepEqual(await pick(wt), { ahead: 0, behind: 0, conflicts: [], uncommitted: 1, worked: true, landed: false });
    await git(wt.path, "add", "c.txt");
    await git(wt.path, "commit", "--quiet", "-m", "sheep: c");
    assert.deepEqual(await pick(wt), { ahead: 1, behind: 0, conflicts: [], uncommitted: 0, worked: true, landed: false });
    const before = await status(repo);
    assert.equal(before, "", "reading changed nothing");
    await ws.land(wt, { squash: false, label: "merge" });
    assert.deepEqual(await pick(wt), { ahead: 0, behind: 0, conflicts: [], uncommitted: 0, worked: true, landed: true });
    await writeFiles(repo, { "d.txt": "dee\n" });
    await git(repo, "add", "d.txt");
    await git(repo, "commit", "--quiet", "-m", "user: d");
    assert.deepEqual(await pick(wt), { ahead: 0, behind: 1, conflicts: [], uncommitted: 0, worked: true, landed: true });
    const s = (await ws.branchState(wt))!;
    assert.equal(s.into, "main");
    assert.equal(s.branch, wt.branch);
    assert.equal(s.exists, true);
  });

  it("a squash landed is landed; a sync that conflicts names the paths", async () => {
    const wt = await isolate("squash", "a_0000000002");
    await writeFiles(wt.path, { "e.txt": "e\n" });
    await ws.land(wt, { squash: true, label: "squash", message: "feat: e" });
    assert.equal((await pick(wt)).landed, true, "after a squash the branch goes on from what landed");
    assert.equal((await git(repo, "log", "-1", "--format=%s")).trim(), "feat: e");
    const other = await isolate("conflict", "a_0000000003");
    await writeFiles(other.path, { "a.txt": "sheep's one\n" });
    await git(other.path, "commit", "--quiet", "-am", "sheep: a");
    await writeFiles(repo, { "a.txt": "user's one\n" });
    await git(repo, "commit", "--quiet", "-am", "user: a");
    assert.deepEqual(await pick(other), { ahead: 1, behind: 1, conflicts: [], uncommitted: 0, worked: true, landed: false });
    const synced = await ws.sync(other, { label: "conflict" });
    assert.deepEqual(synced.conflicts, ["a.txt"]);
    const p = await pick(other);
    assert.deepEqual(p.conflicts, ["a.txt"]);
    assert.equal(p.landed, false);
  });
});
