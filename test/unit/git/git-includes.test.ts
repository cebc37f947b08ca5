/**
 * Config a repository includes only in some context (includeIf gitdir:/onbranch:) still names no
 * driver that runs: git reads it in a worktree's context (its own gitdir, the sheep's branch), not
 * only in the checkout the shepherd was asked about.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import { git, lines, makeRepo, writeFiles } from "../../support/git-repo.ts";

describe("git workspace: config included only in a worktree's context runs nothing", () => {
  let dir: string;
  let marks: string;
  let ws: GitWorkspace;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-includes-"));
    marks = join(dir, "marks");
    await mkdir(marks);
    ws = new GitWorkspace({ worktreesDir: join(dir, "state", "worktrees") });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A repository whose .git/config includes the drivers only under the given condition. */
  async function repoWith(name: string, condition: string) {
    const repo = await makeRepo(join(dir, name), { ".gitattributes": "*.txt filter=evil merge=evil\n", "a.txt": lines(5) });
    const mark = (what: string) => `touch '${join(marks, `${name}-${what}`)}'`;
    await writeFiles(dir, {
      [`${name}.cfg`]: [
        `[filter "evil"]`,
        `\tclean = ${mark("clean")}; cat`,
        `\tsmudge = ${mark("smudge")}; cat`,
        `\trequired = true`,
        `[merge "evil"]`,
        `\tdriver = ${mark("merge")}; exit 0`,
        "",
      ].join("\n"),
    });
    const plain = await readFile(join(repo, ".git", "config"), "utf8");
    await writeFiles(repo, { ".git/config": `${plain}[includeIf "${condition}"]\n\tpath = ${join(dir, `${name}.cfg`)}\n` });
    return repo;
  }

  for (const [name, condition] of [
    ["gitdir", "gitdir:**/worktrees/**"],
    ["onbranch", "onbranch:shepherd/**"],
  ] as const) {
    it(`includeIf "${condition}": isolate, sync, land and remove run no filter or merge driver`, async () => {
      const repo = await repoWith(name, condition);
      const wt = (await ws.isolate({ cwd: repo, agentId: `a_inc${name}`, label: name })).worktree;
      assert.deepEqual(await readdir(marks), [], "isolate ran no driver");
      assert.equal(await readFile(join(wt.path, "a.txt"), "utf8"), lines(5), "checked out as committed");
      await writeFiles(wt.path, { "a.txt": "line 1\nfrom the sheep\nline 3\nline 4\nline 5\n", "b.txt": "b\n" });
      await writeFiles(repo, { "p.txt": "mine\n" });
      await git(repo, "add", "p.txt");
      await git(repo, "commit", "--quiet", "-m", "person");
      await ws.sync(wt, { label: name });
      await ws.land(wt, { squash: false, label: name });
      await writeFiles(wt.path, { "c.txt": "dirty\n" });
      await ws.remove(wt);
      assert.deepEqual(await readdir(marks), [], "no driver of the repository ran");
    });
  }
});
