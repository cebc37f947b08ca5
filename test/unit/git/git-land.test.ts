/**
 * Landing moves exactly the branch it checked, from the commit it checked; it refuses only for what
 * it would write over; it says a fast-forward is one; after a squash the sheep goes on from what
 * landed; an index left behind a move cut short is put right by the next land or sync.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { land } from "../../../src/git/land.ts";
import { Git, type GitCall, type GitResult } from "../../../src/git/run.ts";
import { sync } from "../../../src/git/sync.ts";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import { landText } from "../../../src/texts/format.ts";
import { git, lines, makeRepo, status, writeFiles } from "../../support/git-repo.ts";

/** Git that runs `before` once, just ahead of the first call matching `when`: a person acting at that very moment. */
class Interrupted extends Git {
  constructor(
    private readonly when: (dir: string, args: readonly string[]) => boolean,
    private readonly before: () => Promise<void>,
    private readonly stop = false,
  ) {
    super();
  }
  private done = false;
  override async run(dir: string, args: readonly string[], o?: GitCall): Promise<GitResult> {
    if (!this.done && this.when(dir, args)) {
      this.done = true;
      await this.before();
      // A kill at this step: nothing from here on runs.
      if (this.stop) throw new Error("killed");
    }
    return super.run(dir, args, o);
  }
}

const rev = async (dir: string, what: string) => (await git(dir, "rev-parse", what)).trim();
const subjects = async (dir: string, what: string) => (await git(dir, "log", "--format=%s", what)).trim().split("\n");

describe("git land: what it moves, what stops it, what it says", () => {
  let dir: string;
  let ws: GitWorkspace;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-land-"));
    ws = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function sheep(name: string) {
    const repo = await makeRepo(join(dir, name), { "shared.txt": lines(5), "other.txt": "o\n" });
    const wt = (await ws.isolate({ cwd: repo, agentId: `a_${name.padEnd(10, "x")}`, label: name })).worktree;
    return { repo, wt };
  }

  it("untracked files and changes to files it does not write stay where they are and do not stop it; a fast-forward is said to be one", async () => {
    const { repo, wt } = await sheep("untracked");
    await writeFiles(wt.path, { "shared.txt": "from the sheep\n" });
    await writeFiles(repo, { ".pi/shepherd.json": "{}\n", ".pi/agents/linter.md": "x\n", "other.txt": "mine\n" });
    const landed = await ws.land(wt, { squash: false, label: "untracked" });
    assert.equal(landed.landed, true);
    assert.equal(landed.fastForward, true);
    assert.match(landText({ ...landed, agentId: "a_1", label: "untracked" }), /into main by a fast-forward/);
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), "from the sheep\n");
    assert.equal(await readFile(join(repo, "other.txt"), "utf8"), "mine\n", "the person's change is kept");
    assert.equal(await status(repo), " M other.txt\n?? .pi/agents/linter.md\n?? .pi/shepherd.json\n");
  });

  it("a file of the person's rewritten with the same content (its stat data changed) does not stop it", async () => {
    const { repo, wt } = await sheep("restat");
    await writeFiles(wt.path, { "shared.txt": "from the sheep\n" });
    await writeFiles(repo, { "shared.txt": "mine\n" });
    await writeFiles(repo, { "shared.txt": lines(5) });
    const landed = await ws.land(wt, { squash: false, label: "restat" });
    assert.equal(landed.landed, true);
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), "from the sheep\n");
  });

  it("takes a commit message; a merge is said to be one", async () => {
    const { repo, wt } = await sheep("message");
    await writeFiles(wt.path, { "shared.txt": "from the sheep\n" });
    await writeFiles(repo, { "p.txt": "p\n" });
    await git(repo, "add", "p.txt");
    await git(repo, "commit", "--quiet", "-m", "person");
    const landed = await ws.land(wt, { squash: false, label: "message", message: "Add the sheep's line\n\nwith a body" });
    assert.equal(landed.fastForward, undefined);
    assert.match(landText({ ...landed, agentId: "a_1", label: "message" }), /by a merge commit/);
    assert.equal((await git(repo, "log", "-1", "--format=%B")).trim(), "Add the sheep's line\n\nwith a body");
  });

  it("after a squash, a sync and a second land bring no merge of main and no 'work of sheep' commit into the person's history", async () => {
    const { repo, wt } = await sheep("squash");
    await writeFiles(wt.path, { "shared.txt": "one\n" });
    await writeFiles(repo, { "p.txt": "p\n" });
    await git(repo, "add", "p.txt");
    await git(repo, "commit", "--quiet", "-m", "person");
    const first = await ws.land(wt, { squash: true, label: "squash", message: "first squash" });
    assert.equal(await rev(repo, "HEAD"), first.commit);
    assert.equal(await rev(repo, wt.branch), first.commit, "the sheep goes on from what landed");
    assert.equal(await status(wt.path), "", "its worktree reads clean");
    assert.equal(await readFile(join(wt.path, "p.txt"), "utf8"), "p\n");
    await writeFiles(wt.path, { "shared.txt": "two\n" });
    await writeFiles(repo, { "q.txt": "q\n" });
    await git(repo, "add", "q.txt");
    await git(repo, "commit", "--quiet", "-m", "person again");
    await ws.sync(wt, { label: "squash" });
    await ws.land(wt, { squash: true, label: "squash", message: "second squash" });
    assert.deepEqual(await subjects(repo, "HEAD"), ["second squash", "person again", "first squash", "person", "initial"]);
  });

  it("a branch checked out in place of the checked one just before the move: neither moves, land refuses (item 8)", async () => {
    const { repo, wt } = await sheep("switch");
    await writeFiles(wt.path, { "shared.txt": "from the sheep\n" });
    await git(repo, "branch", "release");
    const head = await rev(repo, "HEAD");
    const user = new Interrupted(
      (d, a) => d === repo && (a[0] === "merge" || (a[0] === "update-ref" && a.some((x) => x === "refs/heads/main"))),
      () => git(repo, "checkout", "--quiet", "release").then(() => undefined),
    );
    const out = await land(user, wt, { squash: false, label: "switch" }).then(
      (l) => l,
      (e: Error) => e,
    );
    assert.equal(await rev(repo, "release"), head, "release, never named, did not move");
    if (out instanceof Error) {
      assert.match(out.message, /^\[land_refused\] your checkout .* switched to refs\/heads\/release while main was being moved; main was put back/);
      assert.equal(await rev(repo, "main"), head, "main was put back");
    } else {
      assert.equal(out.into, "main");
      assert.equal(await rev(repo, "main"), out.commit, "the branch it named is the one that moved");
    }
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), lines(5), "release's files were not written");
  });

  it("a branch moved by someone after it was checked: land refuses and leaves it where they put it (compare-and-swap)", async () => {
    const { repo, wt } = await sheep("moved");
    await writeFiles(wt.path, { "other.txt": "from the sheep\n" });
    const user = new Interrupted(
      (d, a) => d === repo && (a[0] === "merge" || (a[0] === "update-ref" && a.some((x) => x === "refs/heads/main"))),
      async () => {
        await writeFiles(repo, { "p.txt": "p\n" });
        await git(repo, "add", "p.txt");
        await git(repo, "commit", "--quiet", "-m", "person meanwhile");
      },
    );
    await assert.rejects(land(user, wt, { squash: false, label: "moved" }), /^ShepherdError: \[land_refused\] main moved while it was being checked/);
    assert.deepEqual(await subjects(repo, "main"), ["person meanwhile", "initial"]);
    assert.equal(await status(repo), "");
  });

  it("killed between the branch's move and the files': the next land puts the index and files right", async () => {
    const { repo, wt } = await sheep("killland");
    await writeFiles(wt.path, { "new.txt": "from the sheep\n" });
    const killed = new Interrupted(
      (d, a) => d === repo && a[0] === "read-tree",
      async () => undefined,
      true,
    );
    await assert.rejects(land(killed, wt, { squash: false, label: "killland" }), /killed/);
    assert.notEqual(await status(repo), "", "the index was left behind main");
    const again = await ws.land(wt, { squash: false, label: "killland" });
    assert.equal(again.landed, false, "it had landed");
    assert.equal(await status(repo), "", "index and files follow main");
    assert.equal(await readFile(join(repo, "new.txt"), "utf8"), "from the sheep\n");
  });

  it("killed between sync's update-ref and reset: the next sync puts the worktree's index right", async () => {
    const { repo, wt } = await sheep("killsync");
    await writeFiles(wt.path, { "sheep.txt": "from the sheep\n" });
    await writeFiles(repo, { "p.txt": "p\n" });
    await git(repo, "add", "p.txt");
    await git(repo, "commit", "--quiet", "-m", "person");
    const killed = new Interrupted(
      (d, a) => d === wt.path && a[0] === "reset",
      async () => undefined,
      true,
    );
    await assert.rejects(sync(killed, wt, { label: "killsync" }), /killed/);
    assert.match(await status(wt.path), /sheep\.txt/, "the index was left behind the sheep's branch");
    const s = await ws.sync(wt, { label: "killsync" });
    assert.deepEqual([s.synced, s.conflicts], [true, []]);
    assert.equal(await status(wt.path), "");
    assert.equal(await readFile(join(wt.path, "sheep.txt"), "utf8"), "from the sheep\n");
    assert.equal(await readFile(join(wt.path, "p.txt"), "utf8"), "p\n");
  });
});
