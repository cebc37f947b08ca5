/**
 * The git adapter against real repositories made by the test: snapshots that change nothing of
 * the user's, evidence with exact counts, worktrees, landing, and hostile names and config.
 */
import assert from "node:assert/strict";
import { execa } from "execa";
import { existsSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, unlink, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { branchFor, checkedBranch } from "../../../src/git/worktree.ts";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import type { Worktree } from "../../../src/ports/workspace.ts";
import { evidenceText } from "../../../src/texts/evidence.ts";
import { landText } from "../../../src/texts/format.ts";
import { git, lines, makeRepo, status, worktreeList, writeFiles } from "../../support/git-repo.ts";

describe("git workspace: evidence", () => {
  let dir: string;
  let ws: GitWorkspace;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-git-"));
    ws = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("counts exactly what changed since the baseline: untracked included, ignored left out, the user's index untouched", async () => {
    const repo = await makeRepo(join(dir, "r1"), { "a.txt": lines(3), "b.txt": lines(4), ".gitignore": "*.log\n" });
    await writeFiles(repo, { "staged.txt": "staged\n", "old-untracked.txt": "was here\n" });
    await git(repo, "add", "staged.txt");
    const indexBefore = await readFile(join(repo, ".git", "index"));
    const statusBefore = await status(repo);
    const baseline = await ws.baseline(repo);
    assert.ok(baseline);
    assert.equal(baseline.root, repo);
    assert.equal(baseline.commit, (await git(repo, "rev-parse", "HEAD")).trim());

    await writeFiles(repo, { "a.txt": "line 1\nchanged\nline 3\n", "new.txt": "one\ntwo\n", "build.log": "ignored\n", "bin.dat": "\0\x01\x02binary" });
    await unlink(join(repo, "b.txt"));
    const patchPath = join(dir, "p1.patch");
    const e = await ws.diff(baseline, { patchPath, inlineLines: 200 });
    assert.deepEqual(
      e.files.map((f) => [f.path, f.status, f.insertions, f.deletions, f.binary ?? false]),
      [
        ["a.txt", "modified", 1, 1, false],
        ["b.txt", "deleted", 0, 4, false],
        ["bin.dat", "added", 0, 0, true],
        ["new.txt", "added", 2, 0, false],
      ],
    );
    assert.deepEqual([e.insertions, e.deletions, e.fileCount, e.truncated], [3, 5, 4, false]);
    assert.match(e.patch, /^diff --git a\/a\.txt b\/a\.txt/m);
    assert.match(e.patch, /^-line 2\n\+changed$/m);
    assert.doesNotMatch(e.patch, /build\.log|old-untracked|staged\.txt/, "ignored files and what was there before are not in it");
    assert.equal(await readFile(patchPath, "utf8"), e.patch, "the whole patch is on disk");
    assert.equal((await stat(patchPath)).mode & 0o777, 0o600);
    assert.deepEqual(await readFile(join(repo, ".git", "index")), indexBefore, "the user's index is byte for byte the same");
    assert.equal(existsSync(join(repo, ".git", "index.lock")), false);
    assert.notEqual(await status(repo), statusBefore, "(the test changed files)");
    assert.match(await status(repo), /^A {2}staged\.txt$/m, "what the user staged stays staged");
  });

  it("a FIFO or a link a sheep put at the patch's name is never opened: the patch replaces the name", async () => {
    const repo = await makeRepo(join(dir, "r-planted"), { "a.txt": lines(2) });
    const baseline = (await ws.baseline(repo))!;
    await writeFiles(repo, { "a.txt": "changed\n" });
    const yours = join(dir, "your-file.txt");
    await writeFiles(dir, { "your-file.txt": "yours\n" });
    const linked = join(dir, "linked.patch");
    await symlink(yours, linked);
    const fifo = join(dir, "fifo.patch");
    await execa("mkfifo", [fifo]);
    for (const patchPath of [linked, fifo]) {
      // Opening the FIFO would wait for a reader for ever: the test would never end.
      const e = await ws.diff(baseline, { patchPath, inlineLines: 200 });
      assert.match(e.patch, /^\+changed$/m);
      const st = await lstat(patchPath);
      assert.ok(st.isFile(), `${basename(patchPath)} is now the patch, a regular file`);
      assert.equal(st.mode & 0o777, 0o600);
      assert.equal(await readFile(patchPath, "utf8"), e.patch);
    }
    assert.equal(await readFile(yours, "utf8"), "yours\n", "the file the link named is untouched");
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.endsWith(".tmp")),
      [],
      "no temp file is left",
    );
  });

  it("a second baseline holds only what came after it", async () => {
    const repo = await makeRepo(join(dir, "r2"), { "a.txt": lines(2) });
    const first = (await ws.baseline(repo))!;
    await writeFiles(repo, { "one.txt": "1\n" });
    const second = (await ws.baseline(repo))!;
    await writeFiles(repo, { "two.txt": "2\n2\n" });
    const e1 = await ws.diff(first, { patchPath: join(dir, "a.patch"), inlineLines: 200 });
    const e2 = await ws.diff(second, { patchPath: join(dir, "b.patch"), inlineLines: 200 });
    assert.deepEqual(
      e1.files.map((f) => f.path),
      ["one.txt", "two.txt"],
    );
    assert.deepEqual(
      e2.files.map((f) => [f.path, f.insertions]),
      [["two.txt", 2]],
    );
  });

  it("sees a file rewritten within the same second at the same size (racy git)", async () => {
    const repo = join(dir, "racy");
    await mkdir(repo);
    await git(repo, "init", "--quiet");
    // A change time written in the same second (what a fast sheep does) cannot be set by a test;
    // without trustctime, git looks at the modification time alone, which a test can set.
    await git(repo, "config", "core.trustctime", "false");
    // The file, its index entry and the index itself all carry the same second, as after a fast
    // commit: git must not trust the stat data of such an entry.
    const t = new Date(Math.floor(Date.now() / 1000) * 1000 - 100_000);
    await writeFiles(repo, { "r.txt": "aaaa\n" });
    await utimes(join(repo, "r.txt"), t, t);
    await git(repo, "add", "r.txt");
    await git(repo, "commit", "--quiet", "-m", "r");
    await utimes(join(repo, ".git", "index"), t, t);
    const b = (await ws.baseline(repo))!;
    await writeFiles(repo, { "r.txt": "bbbb\n" });
    await utimes(join(repo, "r.txt"), t, t);
    const e = await ws.diff(b, { patchPath: join(dir, "racy.patch"), inlineLines: 20 });
    assert.deepEqual(
      e.files.map((f) => [f.path, f.insertions, f.deletions]),
      [["r.txt", 1, 1]],
    );
  });

  it("keeps 10,000 changed lines on disk and only the first lines inline", async () => {
    const repo = await makeRepo(join(dir, "r3"), { "a.txt": "a\n" });
    const b = (await ws.baseline(repo))!;
    await writeFiles(repo, { "big.txt": lines(10_000) });
    const patchPath = join(dir, "big.patch");
    const e = await ws.diff(b, { patchPath, inlineLines: 200 });
    assert.deepEqual([e.insertions, e.deletions, e.fileCount, e.truncated], [10_000, 0, 1, true]);
    assert.equal(e.patch.split("\n").length - 1, 200, "200 lines inline");
    const full = await readFile(patchPath, "utf8");
    assert.ok(full.startsWith(e.patch));
    assert.equal(full.split("\n").filter((l) => l.startsWith("+line ")).length, 10_000, "every line is in the file");
  });

  it("works with spaces and unicode in the repository's path and its file names", async () => {
    const repo = await makeRepo(join(dir, "my repo ü 名前"), { "dir with space/файл ü.txt": "x\n" });
    const b = (await ws.baseline(join(repo, "dir with space")))!;
    assert.equal(b.root, repo);
    await writeFiles(repo, { "dir with space/файл ü.txt": "y\n", "new file ☃.md": "z\n", "tab\there.txt": "t\n" });
    const e = await ws.diff(b, { patchPath: join(dir, "u.patch"), inlineLines: 200 });
    assert.deepEqual(
      e.files.map((f) => [f.path, f.status]),
      [
        ["dir with space/файл ü.txt", "modified"],
        ["new file ☃.md", "added"],
        ["tab\there.txt", "added"],
      ],
    );
  });

  it("outside git there is no baseline and no error; a repository without a commit still has one", async () => {
    const plain = join(dir, "plain");
    await mkdir(plain);
    assert.equal(await ws.baseline(plain), undefined);
    const fresh = join(dir, "fresh");
    await mkdir(fresh);
    await git(fresh, "init", "--quiet");
    const b = (await ws.baseline(fresh))!;
    assert.equal(b.commit, undefined);
    await writeFiles(fresh, { "first.txt": "hello\n" });
    const e = await ws.diff(b, { patchPath: join(dir, "f.patch"), inlineLines: 200 });
    assert.deepEqual(
      e.files.map((f) => [f.path, f.status, f.insertions]),
      [["first.txt", "added", 1]],
    );
  });

  it("ignores GIT_DIR and friends from the environment, and never runs a repository's fsmonitor", async () => {
    const repo = await makeRepo(join(dir, "r4"), { "a.txt": "a\n" });
    const other = await makeRepo(join(dir, "other"), { "o.txt": "o\n" });
    const pwned = join(dir, "pwned");
    await git(repo, "config", "core.fsmonitor", `touch '${pwned}'; false`);
    const hostile = new GitWorkspace({
      worktreesDir: join(dir, "wt"),
      env: { ...process.env, GIT_DIR: join(other, ".git"), GIT_WORK_TREE: other, GIT_INDEX_FILE: join(other, ".git", "index") },
    });
    const b = (await hostile.baseline(repo))!;
    assert.equal(b.root, repo);
    await writeFiles(repo, { "a.txt": "b\n" });
    const e = await hostile.diff(b, { patchPath: join(dir, "h.patch"), inlineLines: 10 });
    assert.deepEqual(
      e.files.map((f) => f.path),
      ["a.txt"],
    );
    assert.equal(existsSync(pwned), false, "core.fsmonitor never ran");
    assert.equal(await status(other), "", "the other repository was not touched");
  });
});

describe("git workspace: worktrees and landing", () => {
  let dir: string;
  let ws: GitWorkspace;
  let worktrees: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-wt-"));
    worktrees = join(dir, "state dir", "worktrees");
    ws = new GitWorkspace({ worktreesDir: worktrees });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("names branches from labels without letting any label become an option or a ref trick", () => {
    assert.equal(branchFor("recon", "a_0123456789"), "shepherd/recon-0123456789");
    assert.equal(branchFor("--upload-pack=touch x; $(rm -rf ~)", "a_0123456789"), "shepherd/upload-pack-touch-x-rm-rf-0123456789");
    assert.equal(branchFor("Über café", "a_0123456789"), "shepherd/Uber-cafe-0123456789");
    assert.equal(branchFor("тест", "a_0123456789"), "shepherd/sheep-0123456789");
    assert.equal(branchFor("a..b.lock", "a_0123456789"), "shepherd/a-b-lock-0123456789");
    for (const bad of ["-x", "--force", "shepherd/../x", "shepherd/a b", "refs/heads/main", "shepherd/x\n"]) {
      assert.throws(() => checkedBranch(bad), /^ShepherdError: \[git_error\]/, bad);
    }
  });

  it("isolates a sheep in a worktree of HEAD outside the checkout, leaving the user's changes where they are", async () => {
    const repo = await makeRepo(join(dir, "user repo ü"), { "a.txt": lines(3), "sub/dir/b.txt": "b\n" });
    await writeFiles(repo, { "a.txt": "mine, uncommitted\n", "scratch.txt": "mine\n" });
    const before = await status(repo);
    const iso = await ws.isolate({ cwd: join(repo, "sub", "dir"), agentId: "a_0123456789", label: "--force $(touch x)" });
    assert.equal(iso.worktree.path, join(worktrees, "a_0123456789"));
    assert.equal(iso.cwd, join(worktrees, "a_0123456789", "sub", "dir"), "the same place inside the worktree");
    assert.equal(iso.worktree.branch, "shepherd/force-touch-x-0123456789");
    assert.equal(iso.worktree.leftBehind, 2);
    assert.equal(iso.worktree.base, (await git(repo, "rev-parse", "HEAD")).trim());
    assert.equal(await readFile(join(iso.worktree.path, "a.txt"), "utf8"), lines(3), "it starts from HEAD");
    assert.equal(existsSync(join(iso.worktree.path, "scratch.txt")), false);
    assert.equal(await status(repo), before, "the user's checkout is as it was");
    assert.deepEqual(await worktreeList(repo), [repo, iso.worktree.path]);
    assert.equal(existsSync(join(repo, "x")) || existsSync(join(iso.worktree.path, "x")), false);
    assert.equal((await stat(worktrees)).mode & 0o777, 0o700);
  });

  it("refuses isolation outside git and in a repository without a commit", async () => {
    const plain = join(dir, "plain");
    await mkdir(plain);
    await assert.rejects(
      ws.isolate({ cwd: plain, agentId: "a_1111111111", label: "x" }),
      /^ShepherdError: \[not_a_repository\] isolate needs a git repository/,
    );
    const fresh = join(dir, "fresh");
    await mkdir(fresh);
    await git(fresh, "init", "--quiet");
    await assert.rejects(ws.isolate({ cwd: fresh, agentId: "a_2222222222", label: "x" }), /^ShepherdError: \[not_a_repository\] .*no commit yet/);
  });

  it("a worktree continued from another starts with that one's work, uncommitted files too, and leaves the other as it was", async () => {
    const repo = await makeRepo(join(dir, "chain"), { "a.txt": lines(3), "sub/b.txt": "b\n" });
    const first = (await ws.isolate({ cwd: join(repo, "sub"), agentId: "a_chain00001", label: "plan" })).worktree;
    await writeFiles(first.path, { "a.txt": "planned\n", "plan.md": "step 1\n" });
    const firstStatus = await status(first.path);
    const firstTip = (await git(repo, "rev-parse", first.branch)).trim();
    const next = await ws.isolate({ cwd: join(repo, "sub"), agentId: "a_chain00002", label: "build", from: first });
    assert.equal(next.cwd, join(next.worktree.path, "sub"));
    assert.equal(await readFile(join(next.worktree.path, "a.txt"), "utf8"), "planned\n", "the step before's uncommitted change is there");
    assert.equal(await readFile(join(next.worktree.path, "plan.md"), "utf8"), "step 1\n", "and its new file");
    assert.equal(await status(next.worktree.path), "", "it starts clean: the work before it is its base commit");
    assert.notEqual(next.worktree.base, (await git(repo, "rev-parse", "HEAD")).trim());
    assert.equal((await git(repo, "rev-parse", `${next.worktree.base}^`)).trim(), firstTip, "its base sits on the step before's branch");
    assert.equal(await status(first.path), firstStatus, "the step before's worktree is untouched");
    assert.equal((await git(repo, "rev-parse", first.branch)).trim(), firstTip, "and so is its branch");
    // Landing the last step brings every step's work.
    await writeFiles(next.worktree.path, { "built.txt": "done\n" });
    const landed = await ws.land(next.worktree, { squash: false, label: "build" });
    assert.equal(landed.landed, true);
    assert.deepEqual(landed.files.map((f) => f.path).sort(), ["a.txt", "built.txt", "plan.md"]);
    assert.equal(await readFile(join(repo, "a.txt"), "utf8"), "planned\n");
  });

  it("a worktree to continue from in another repository is no base: the new one starts at its own HEAD", async () => {
    const one = await makeRepo(join(dir, "repo-one"), { "a.txt": "one\n" });
    const two = await makeRepo(join(dir, "repo-two"), { "a.txt": "two\n" });
    const first = (await ws.isolate({ cwd: one, agentId: "a_other00001", label: "x" })).worktree;
    await writeFiles(first.path, { "a.txt": "changed\n" });
    const next = await ws.isolate({ cwd: two, agentId: "a_other00002", label: "y", from: first });
    assert.equal(next.worktree.base, (await git(two, "rev-parse", "HEAD")).trim());
    assert.equal(await readFile(join(next.worktree.path, "a.txt"), "utf8"), "two\n");
  });

  async function twoSheep(name: string) {
    const repo = await makeRepo(join(dir, name), { "shared.txt": lines(5), "other.txt": "o\n" });
    const a = (await ws.isolate({ cwd: repo, agentId: `a_${name.padEnd(10, "a")}`, label: "one" })).worktree;
    const b = (await ws.isolate({ cwd: repo, agentId: `a_${name.padEnd(10, "b")}`, label: "two" })).worktree;
    return { repo, a, b };
  }

  it("two isolated sheep edit the same file without seeing each other; one lands, the conflicting second stops and changes nothing", async () => {
    const { repo, a, b } = await twoSheep("land");
    await writeFiles(a.path, { "shared.txt": "line 1\nfrom one\nline 3\nline 4\nline 5\n", "one-new.txt": "new\n" });
    await writeFiles(b.path, { "shared.txt": "line 1\nfrom two\nline 3\nline 4\nline 5\n" });
    assert.equal(await readFile(join(b.path, "shared.txt"), "utf8"), "line 1\nfrom two\nline 3\nline 4\nline 5\n");
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), lines(5), "the user's checkout has neither");

    const inspectA = await ws.inspect(a);
    assert.deepEqual([inspectA.exists, inspectA.uncommitted.sort(), inspectA.unlanded], [true, ["one-new.txt", "shared.txt"], false]);

    const landed = await ws.land(a, { squash: false, label: "one" });
    assert.equal(landed.landed, true);
    assert.equal(landed.into, "main");
    assert.deepEqual(
      landed.files.map((f) => [f.path, f.insertions, f.deletions]),
      [
        ["one-new.txt", 1, 0],
        ["shared.txt", 1, 1],
      ],
    );
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), "line 1\nfrom one\nline 3\nline 4\nline 5\n");
    assert.equal(await status(repo), "", "landed as a commit; the checkout is clean");
    assert.equal((await git(repo, "rev-parse", "HEAD")).trim(), landed.commit);
    assert.equal(await status(a.path), "", "the sheep's work is a commit on its branch now");
    assert.deepEqual(await ws.inspect(a), { exists: true, uncommitted: [], unlanded: false });

    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    await assert.rejects(
      ws.land(b, { squash: false, label: "two" }),
      /^ShepherdError: \[land_refused\] landing shepherd\/two-.* into main conflicts in: shared\.txt\. Bring main into the sheep.s worktree with action "sync".* Nothing was changed\.$/,
    );
    assert.equal((await git(repo, "rev-parse", "HEAD")).trim(), head, "HEAD did not move");
    assert.equal(await status(repo), "");
    assert.equal(await readFile(join(b.path, "shared.txt"), "utf8"), "line 1\nfrom two\nline 3\nline 4\nline 5\n", "the sheep's files are as they were");
    assert.match(await status(b.path), /^ M shared\.txt$/m, "still uncommitted in the sheep's worktree");
    assert.deepEqual((await ws.inspect(b)).uncommitted, ["shared.txt"]);

    const again = await ws.land(a, { squash: false, label: "one" });
    assert.equal(again.landed, false, "landing twice brings nothing");
  });

  it("refuses to land into a checkout with uncommitted changes to a file it would write, naming it", async () => {
    const { repo, a } = await twoSheep("dirty");
    await writeFiles(a.path, { "other.txt": "changed by the sheep\n" });
    await writeFiles(repo, { "other.txt": "mine\n" });
    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    await assert.rejects(
      ws.land(a, { squash: false, label: "one" }),
      /^ShepherdError: \[land_refused\] your checkout .* has uncommitted changes in files the landing would write: other\.txt;/,
    );
    assert.equal((await git(repo, "rev-parse", "HEAD")).trim(), head);
    assert.equal(await readFile(join(repo, "other.txt"), "utf8"), "mine\n");
    assert.equal((await git(a.path, "rev-parse", "HEAD")).trim(), a.base, "the sheep's branch did not move either");
  });

  it("squash lands one commit on top of the user's own new commits, into a branch with a hostile name", async () => {
    const { repo, a } = await twoSheep("squash");
    const hostile = "$(touch$" + "{IFS}pwned)';touch;'";
    await git(repo, "checkout", "--quiet", "-b", hostile);
    await writeFiles(repo, { "user.txt": "user\n" });
    await git(repo, "add", "user.txt");
    await git(repo, "commit", "--quiet", "-m", "user work");
    const userHead = (await git(repo, "rev-parse", "HEAD")).trim();
    await writeFiles(a.path, { "other.txt": "by the sheep\n" });
    const landed = await ws.land(a, { squash: true, label: "one" });
    assert.equal(landed.into, hostile);
    assert.equal((await git(repo, "rev-parse", "HEAD^")).trim(), userHead, "one commit on top of the user's");
    assert.equal((await git(repo, "rev-list", "--count", "--merges", "HEAD")).trim(), "0", "no merge commit");
    assert.equal(await readFile(join(repo, "other.txt"), "utf8"), "by the sheep\n");
    assert.equal(existsSync(join(repo, "pwned")) || existsSync(join(repo, "touch")), false);
    assert.equal((await ws.land(a, { squash: true, label: "one" })).landed, false, "nothing left to land");
  });

  it("removes a worktree and its branch; git's list matches", async () => {
    const { repo, a, b } = await twoSheep("remove");
    await writeFiles(b.path, { "x.txt": "x\n" });
    assert.equal((await ws.inspect(b)).uncommitted.length, 1);
    await ws.remove(a);
    await ws.remove(b);
    assert.deepEqual(await worktreeList(repo), [repo]);
    assert.equal((await git(repo, "branch", "--list", "shepherd/*")).trim(), "");
    await ws.remove(a); // twice is fine
    const gone: Worktree = { ...a, branch: "--delete" };
    await assert.rejects(ws.remove(gone), /^ShepherdError: \[git_error\] "--delete" is not a branch name the shepherd made/);
  });

  it("refuses a state directory inside the user's checkout", async () => {
    const repo = await makeRepo(join(dir, "home-like"), { "a.txt": "a\n" });
    const inside = new GitWorkspace({ worktreesDir: join(repo, ".pi", "agent", "pi-shepherd", "worktrees") });
    await assert.rejects(
      inside.isolate({ cwd: repo, agentId: "a_3333333333", label: "x" }),
      /^ShepherdError: \[git_error\] the shepherd's state directory is inside the repository/,
    );
    assert.deepEqual(await worktreeList(repo), [repo]);
  });

  it("a worktree whose directory someone deleted can still be removed", async () => {
    const { repo, a } = await twoSheep("deleted");
    await rm(a.path, { recursive: true, force: true });
    assert.equal((await ws.inspect(a)).exists, false);
    await ws.remove(a);
    assert.equal((await worktreeList(repo)).includes(a.path), false);
    assert.equal((await git(repo, "branch", "--list", a.branch)).trim(), "");
  });
});

/**
 * A repository whose own config names programs: filters, a merge driver, diff programs, hooks
 * (in .git/hooks and at core.hooksPath), an fsmonitor, a signing program. Each would leave its
 * name in the marker directory if it ran. The person's own git steps run with it disarmed.
 */
describe("git workspace: a repository's config runs nothing", () => {
  let dir: string;
  let marks: string;
  let ws: GitWorkspace;
  const HOOKS = [
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-merge-commit",
    "post-merge",
    "post-checkout",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
    "post-rewrite",
  ];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-hostile-"));
    marks = join(dir, "marks");
    await mkdir(marks);
    ws = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const mark = (name: string) => `touch '${join(marks, name)}'`;

  /** A repository with every program configured but not yet armed. */
  async function hostileRepo(name: string) {
    const repo = await makeRepo(join(dir, name), {
      ".gitattributes": "*.txt filter=evil merge=evil diff=evil\n*.p filter=evilp\n",
      "a.txt": lines(5),
      "b.p": "p\n",
    });
    const bin = join(dir, `${name}-bin`);
    const hooks = join(dir, `${name}-hooks`);
    await mkdir(bin);
    await mkdir(hooks);
    const script = async (path: string, body: string) => {
      await writeFiles(dirname(path), { [basename(path)]: `#!/bin/sh\n${body}\n` });
      await chmod(path, 0o755);
    };
    for (const h of HOOKS) {
      await script(join(hooks, h), `${mark(`hook-${h}`)}; exit 0`);
    }
    await script(join(bin, "gpg"), `${mark("gpg")}; exit 1`);
    const config = [
      `[filter "evil"]`,
      `\tclean = ${mark("clean")}; cat`,
      `\tsmudge = ${mark("smudge")}; cat`,
      `\trequired = true`,
      `[filter "evilp"]`,
      `\tprocess = ${mark("process")}; cat`,
      `\trequired = true`,
      `[merge "evil"]`,
      `\tdriver = ${mark("merge-driver")}; exit 0`,
      `[diff "evil"]`,
      `\ttextconv = ${mark("textconv")}; cat`,
      `\tcommand = ${mark("diff-command")}`,
      `[diff]`,
      `\texternal = ${join(bin, "extdiff")}`,
      `[core]`,
      `\thooksPath = ${hooks}`,
      `\tfsmonitor = ${join(bin, "fsmonitor")}`,
      `[commit]`,
      `\tgpgSign = true`,
      `[gpg]`,
      `\tprogram = ${join(bin, "gpg")}`,
      `[merge]`,
      `\tverifySignatures = true`,
      `\trenormalize = true`,
      "",
    ].join("\n");
    await script(join(bin, "extdiff"), mark("diff-external"));
    await script(join(bin, "fsmonitor"), `${mark("fsmonitor")}; exit 1`);
    const cfg = join(dir, `${name}.cfg`);
    await writeFiles(dir, { [`${name}.cfg`]: config });
    const localConfig = join(repo, ".git", "config");
    const plain = await readFile(localConfig, "utf8");
    return {
      repo,
      /** The repository's config and its .git/hooks hold every program. */
      arm: async () => {
        await writeFiles(repo, { ".git/config": `${plain}[include]\n\tpath = ${cfg}\n` });
        for (const h of HOOKS) await script(join(repo, ".git", "hooks", h), `${mark(`githooks-${h}`)}; exit 0`);
      },
      /** For the person's own git steps. */
      disarm: async () => {
        await writeFiles(repo, { ".git/config": plain });
        for (const h of HOOKS) await rm(join(repo, ".git", "hooks", h), { force: true });
      },
    };
  }

  it("baseline, diff, isolate, sync, land, a chain's next step and remove run no filter, driver, hook, fsmonitor or signing program", async () => {
    const h = await hostileRepo("all");
    await h.arm();
    const baseline = (await ws.baseline(h.repo))!;
    await writeFiles(h.repo, { "a.txt": "changed\n", "new.txt": "new\n", "b.p": "q\n" });
    const e = await ws.diff(baseline, { patchPath: join(dir, "all.patch"), inlineLines: 50 });
    assert.deepEqual(e.files.map((f) => f.path).sort(), ["a.txt", "b.p", "new.txt"]);
    await h.disarm();
    await git(h.repo, "checkout", "--quiet", "--", ".");
    await git(h.repo, "clean", "--quiet", "-fd");
    await h.arm();

    const one = (await ws.isolate({ cwd: h.repo, agentId: "a_hostile001", label: "one" })).worktree;
    assert.equal(await readFile(join(one.path, "a.txt"), "utf8"), lines(5), "checked out as committed");
    await writeFiles(one.path, { "a.txt": "line 1\nfrom the sheep\nline 3\nline 4\nline 5\n", "one.txt": "one\n" });
    const next = (await ws.isolate({ cwd: h.repo, agentId: "a_hostile002", label: "two", from: one })).worktree;
    assert.equal(await readFile(join(next.path, "one.txt"), "utf8"), "one\n");
    await ws.inspect(one);

    // The person commits meanwhile: landing needs a real merge.
    await h.disarm();
    await writeFiles(h.repo, { "person.txt": "mine\n" });
    await git(h.repo, "add", "person.txt");
    await git(h.repo, "commit", "--quiet", "-m", "person");
    await h.arm();
    const synced = await ws.sync(one, { label: "one" });
    assert.deepEqual([synced.synced, synced.conflicts], [true, []]);
    assert.equal(await readFile(join(one.path, "person.txt"), "utf8"), "mine\n");
    const landed = await ws.land(one, { squash: false, label: "one" });
    assert.equal(landed.landed, true);
    await ws.remove(next);
    await ws.remove(one);
    assert.deepEqual(await readdir(marks), [], "no program of the repository ran");
  });

  it("a merge driver of the repository is not run: the path it would merge counts as a conflict", async () => {
    const h = await hostileRepo("driver");
    await h.arm();
    const wt = (await ws.isolate({ cwd: h.repo, agentId: "a_hostile003", label: "drv" })).worktree;
    await writeFiles(wt.path, { "a.txt": "line 1\nfrom the sheep\nline 3\nline 4\nline 5\n" });
    await h.disarm();
    await writeFiles(h.repo, { "a.txt": "line 1\nline 2\nline 3\nline 4\nfrom the person\n" });
    await git(h.repo, "commit", "--quiet", "-am", "person");
    await h.arm();
    await assert.rejects(ws.land(wt, { squash: false, label: "drv" }), /^ShepherdError: \[land_refused\] .*conflicts in: a\.txt/);
    assert.deepEqual(await readdir(marks), []);
  });
});

describe("git workspace: landing never replaces what git does not track; links are said to be links", () => {
  let dir: string;
  let ws: GitWorkspace;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-ignored-"));
    ws = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function setup(name: string, files: Record<string, string> = {}) {
    const repo = await makeRepo(join(dir, name), { ".gitignore": ".env\nbuild\ncache/\n", "a.txt": "a\n", ...files });
    const wt = (await ws.isolate({ cwd: repo, agentId: `a_${name.padEnd(10, "0")}`, label: name })).worktree;
    return { repo, wt };
  }

  async function refusedAndUnchanged(repo: string, wt: Worktree, pattern: RegExp) {
    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    const tip = (await git(repo, "rev-parse", wt.branch)).trim();
    const sheepStatus = await status(wt.path);
    await assert.rejects(ws.land(wt, { squash: false, label: "x" }), pattern);
    assert.equal((await git(repo, "rev-parse", "HEAD")).trim(), head, "the user's branch did not move");
    assert.equal((await git(repo, "rev-parse", wt.branch)).trim(), tip, "nor the sheep's");
    assert.equal(await status(wt.path), sheepStatus, "the sheep's worktree is as it was");
  }

  it("a sheep that rewrote .gitignore and wrote .env does not replace the user's ignored .env", async () => {
    const { repo, wt } = await setup("env");
    await writeFiles(repo, { ".env": "SECRET=the user's own\n" });
    assert.equal(await status(repo), "", "the user's .env is ignored: the checkout is clean");
    await writeFiles(wt.path, { ".gitignore": "build\n", ".env": "SECRET=the sheep's\n" });
    await refusedAndUnchanged(
      repo,
      wt,
      /^ShepherdError: \[land_refused\] landing would overwrite files in your checkout .* that git does not track \(ignored or untracked\): \.env; move them out of the way \(or commit them\), then land again\. Nothing was changed\./,
    );
    assert.equal(await readFile(join(repo, ".env"), "utf8"), "SECRET=the user's own\n");
    assert.equal(await readFile(join(repo, ".gitignore"), "utf8"), ".env\nbuild\ncache/\n");
    // Moved away, it lands.
    await rm(join(repo, ".env"));
    const landed = await ws.land(wt, { squash: false, label: "x" });
    assert.deepEqual(landed.files.map((f) => [f.path, f.status]).sort(), [
      [".env", "added"],
      [".gitignore", "modified"],
    ]);
  });

  it("an ignored file where a new directory goes, and an ignored directory where a new file goes, stop it too", async () => {
    const one = await setup("dirfile");
    await writeFiles(one.repo, { build: "the user's build output\n" });
    await writeFiles(one.wt.path, { ".gitignore": "", "build/out.js": "x\n" });
    await refusedAndUnchanged(one.repo, one.wt, /^ShepherdError: \[land_refused\] landing would overwrite .*: build;/);
    assert.equal(await readFile(join(one.repo, "build"), "utf8"), "the user's build output\n");

    const two = await setup("filedir");
    await writeFiles(two.repo, { "cache/data.bin": "the user's cache\n" });
    await writeFiles(two.wt.path, { ".gitignore": "", cache: "a file now\n" });
    await refusedAndUnchanged(two.repo, two.wt, /^ShepherdError: \[land_refused\] landing would overwrite .*: cache\/data\.bin;/);
    assert.equal(await readFile(join(two.repo, "cache", "data.bin"), "utf8"), "the user's cache\n");
  });

  it("a symbolic link that lands is said to be one, with its target, in land's text and in the evidence", async () => {
    const { repo, wt } = await setup("links");
    const b = (await ws.baseline(wt.path))!;
    await symlink("/etc/passwd", join(wt.path, "passwd-link"));
    const e = await ws.diff(b, { patchPath: join(dir, "links.patch"), inlineLines: 20 });
    assert.deepEqual(
      e.files.map((f) => [f.path, f.status, f.link]),
      [["passwd-link", "added", "/etc/passwd"]],
    );
    assert.match(evidenceText({ ...e, shared: false }, { patch: false }), /^ {2}added {6}passwd-link → \/etc\/passwd \(symlink\)$/m);
    // A remote sheep's patch is a file on its host, and says so.
    assert.match(evidenceText({ ...e, shared: false }, { patch: false }), /^Patch: \S+\.patch$/m);
    assert.match(evidenceText({ ...e, baseline: { ...e.baseline, host: "gpu" }, shared: false }, { patch: false }), /^Patch: \S+\.patch on host gpu$/m);
    const landed = await ws.land(wt, { squash: false, label: "links" });
    assert.equal(landed.files[0]?.link, "/etc/passwd");
    const text = landText({ ...landed, agentId: "a_links00000", label: "links" });
    assert.match(text, /^ {2}added {6}passwd-link → \/etc\/passwd \(symlink\)$/m);
    assert.equal((await lstat(join(repo, "passwd-link"))).isSymbolicLink(), true);
  });
});

describe("git workspace: sync brings the user's branch into a sheep's worktree, and only there", () => {
  let dir: string;
  let ws: GitWorkspace;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sync-"));
    ws = new GitWorkspace({ worktreesDir: join(dir, "state dir", "worktrees") });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function setup(name: string) {
    const repo = await makeRepo(join(dir, name), { "shared.txt": lines(5), "other.txt": "o\n" });
    const wt = (await ws.isolate({ cwd: repo, agentId: `a_${name.padEnd(10, "0")}`, label: name })).worktree;
    return { repo, wt };
  }

  /** HEAD, the index byte for byte, the status and the branches of the user's checkout. */
  async function userSide(repo: string) {
    return {
      head: (await git(repo, "rev-parse", "HEAD")).trim(),
      index: await readFile(join(repo, ".git", "index")),
      status: await status(repo),
      branches: await git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main"),
    };
  }

  async function personCommits(repo: string, files: Record<string, string>) {
    await writeFiles(repo, files);
    await git(repo, "commit", "--quiet", "-am", "the person's work");
  }

  it("a clean sync merges the user's branch into the worktree, the sheep's uncommitted work kept; the user's checkout is untouched", async () => {
    const { repo, wt } = await setup("clean");
    await personCommits(repo, { "other.txt": "the person's\n" });
    await writeFiles(wt.path, { "shared.txt": "line 1\nthe sheep's\nline 3\nline 4\nline 5\n", "sheep-new.txt": "new\n" });
    const before = await userSide(repo);
    const synced = await ws.sync(wt, { label: "clean" });
    assert.deepEqual(await userSide(repo), before, "HEAD, index, status and branch of the user's checkout are as they were");
    assert.deepEqual([synced.synced, synced.from, synced.committedWork, synced.conflicts], [true, "main", true, []]);
    assert.equal(synced.fromCommit, before.head);
    assert.deepEqual(
      synced.files.map((f) => [f.path, f.status]),
      [["other.txt", "modified"]],
      "what came in",
    );
    assert.equal(await readFile(join(wt.path, "other.txt"), "utf8"), "the person's\n");
    assert.equal(await readFile(join(wt.path, "shared.txt"), "utf8"), "line 1\nthe sheep's\nline 3\nline 4\nline 5\n", "the sheep's work is there");
    assert.equal(await status(wt.path), "", "as commits on its branch");
    assert.equal((await git(wt.path, "symbolic-ref", "HEAD")).trim(), `refs/heads/${wt.branch}`);
    const again = await ws.sync(wt, { label: "clean" });
    assert.equal(again.synced, false, "syncing twice brings nothing");
    const landed = await ws.land(wt, { squash: false, label: "clean" });
    assert.deepEqual(landed.files.map((f) => f.path).sort(), ["shared.txt", "sheep-new.txt"].sort());
  });

  it("a conflicting land names sync; the sync leaves the conflicts in the worktree, land waits for them, and lands once resolved", async () => {
    const { repo, wt } = await setup("conflict");
    await personCommits(repo, { "shared.txt": "line 1\nthe person's\nline 3\nline 4\nline 5\n" });
    await writeFiles(wt.path, { "shared.txt": "line 1\nthe sheep's\nline 3\nline 4\nline 5\n" });
    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    await assert.rejects(ws.land(wt, { squash: false, label: "conflict" }), (e: Error) => {
      assert.match(e.message, /^\[land_refused\] landing shepherd\/conflict-.* into main conflicts in: shared\.txt\. /);
      assert.match(e.message, /with action "sync" \(or \/shepherd sync conflict\)/);
      assert.ok(e.message.includes(`By hand: git -C '${wt.path}' merge ${head} (the tip of main)`), e.message);
      assert.ok(e.message.includes(`git -C '${wt.path}' commit --no-edit`), e.message);
      assert.match(e.message, /Nothing was changed\.$/);
      return true;
    });
    const before = await userSide(repo);
    const synced = await ws.sync(wt, { label: "conflict" });
    assert.deepEqual(await userSide(repo), before, "the user's checkout is untouched");
    assert.deepEqual([synced.synced, synced.conflicts], [true, ["shared.txt"]]);
    assert.deepEqual(await ws.conflicts(wt), ["shared.txt"]);
    const text = await readFile(join(wt.path, "shared.txt"), "utf8");
    assert.match(text, /^<<<<<<< HEAD\nthe sheep's\n=======\nthe person's\n>>>>>>> /m, "conflict markers for the sheep");
    assert.equal(existsSync(join(await git(wt.path, "rev-parse", "--absolute-git-dir").then((d) => d.trim()), "MERGE_HEAD")), true, "the merge is in progress");
    await assert.rejects(
      ws.sync(wt, { label: "conflict" }),
      /^ShepherdError: \[sync_refused\] .*already has a merge in progress with conflicts in: shared\.txt/,
    );
    await assert.rejects(
      ws.land(wt, { squash: false, label: "conflict" }),
      /^ShepherdError: \[land_refused\] the sheep's worktree .* unresolved conflicts in: shared\.txt\./,
    );
    assert.deepEqual(await userSide(repo), before);

    // The sheep resolves and stages it, without committing: landing finishes its merge.
    await writeFiles(wt.path, { "shared.txt": "line 1\nboth\nline 3\nline 4\nline 5\n" });
    await git(wt.path, "add", "shared.txt");
    assert.deepEqual(await ws.conflicts(wt), []);
    const landed = await ws.land(wt, { squash: false, label: "conflict" });
    assert.equal(landed.landed, true);
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), "line 1\nboth\nline 3\nline 4\nline 5\n");
    assert.equal(await status(wt.path), "");
  });

  it("refuses a worktree that is not on the sheep's branch", async () => {
    const { repo, wt } = await setup("elsewhere");
    await git(repo, "branch", "users-other");
    await git(wt.path, "checkout", "--quiet", "users-other");
    await personCommits(repo, { "other.txt": "x\n" });
    await assert.rejects(
      ws.sync(wt, { label: "elsewhere" }),
      /^ShepherdError: \[sync_refused\] the worktree .* is not on the sheep's branch shepherd\/elsewhere-.*\(it is on refs\/heads\/users-other\)\. Nothing was changed\./,
    );
    assert.equal((await git(repo, "rev-parse", "users-other")).trim(), (await git(repo, "rev-parse", "HEAD~1")).trim(), "the user's branch did not move");
  });
});
