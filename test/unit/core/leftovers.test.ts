/**
 * A shepherd killed while it started an isolated sheep leaves a worktree and a branch that no
 * record knows. Their mark tells them apart: doctor reports them, prune removes them (one holding
 * work only with force) and says so; a worktree whose maker still runs is left alone.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { worktreeChecks } from "../../../src/doctor/worktrees.ts";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import { pruneText } from "../../../src/texts/format.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { git, makeRepo, writeFiles } from "../../support/git-repo.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

describe("worktrees no record knows (a start cut short)", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-leftover-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("doctor reports them, prune removes them and says so; work needs force; a live maker's start is left alone", async () => {
    const stateDir = join(dir, "state");
    const ws = new GitWorkspace({ worktreesDir: join(stateDir, "worktrees") });
    const repo = await makeRepo(join(dir, "repo"), { "a.txt": "a\n" });
    const ownerAlive = (o: string) => o === "me";
    // Two starts of a shepherd that was killed before recording them; one of this one's, on its way.
    const clean = (await ws.isolate({ cwd: repo, agentId: "a_cutshort1", label: "one", owner: "4242:dead" })).worktree;
    const worked = (await ws.isolate({ cwd: repo, agentId: "a_cutshort2", label: "two", owner: "4242:dead" })).worktree;
    const mine = (await ws.isolate({ cwd: repo, agentId: "a_onitsway1", label: "three", owner: "me" })).worktree;
    await writeFiles(worked.path, { "w.txt": "work\n" });

    const checks = await worktreeChecks({ stateDir, ownerAlive }, []);
    assert.deepEqual(
      checks.map((c) => [c.name, c.verdict]),
      [
        ["orphan worktree", "warn"],
        ["orphan worktree", "warn"],
      ],
    );
    assert.ok(checks.some((c) => c.detail.includes(clean.path) && c.detail.includes(clean.branch)));
    assert.ok(
      checks.every((c) => !c.detail.includes(mine.path)),
      "a live maker's worktree is not an orphan",
    );

    const world = new MemoryWorld();
    const shepherd = new Shepherd({
      runtime: world.runtime,
      files: world.files,
      owner: "me",
      ownerAlive,
      clock: new FakeClock(),
      audit: { record: () => undefined },
      workspace: ws,
    });
    const out = await shepherd.prune();
    assert.deepEqual(
      out.worktrees.map((w) => w.path),
      [clean.path],
    );
    assert.deepEqual(
      out.kept.map((k) => [k.path, k.leftover]),
      [[worked.path, true]],
    );
    const text = pruneText(out);
    assert.match(text, new RegExp(`Removed the worktree at ${clean.path} and its branch ${clean.branch}, which no record knew`));
    assert.match(text, /Kept the worktree at .* that no record knows \(a start cut short\): it has uncommitted changes \(w\.txt\).*\/shepherd prune --force/);
    assert.equal(existsSync(clean.path), false);

    const forced = await shepherd.prune({ force: true });
    assert.deepEqual(
      forced.worktrees.map((w) => w.path),
      [worked.path],
    );
    assert.equal((await git(repo, "branch", "--format=%(refname:short)", "--list", "shepherd/*")).trim(), mine.branch, "only the live maker's branch is left");
    assert.ok(existsSync(mine.path));
    assert.deepEqual(await worktreeChecks({ stateDir, ownerAlive }, []), [
      { name: "orphan worktrees", verdict: "pass", detail: "none among 1 marked worktrees" },
    ]);
  });
});
