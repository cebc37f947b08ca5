/**
 * The evidence patch is written into the directory that was checked, never where a link put in its
 * place (before the write or while it runs) points.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rename, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { evidenceDiff } from "../../../src/git/diff.ts";
import { Git, type GitCall, type GitResult } from "../../../src/git/run.ts";
import { GitWorkspace } from "../../../src/git/workspace.ts";
import { makeRepo, writeFiles } from "../../support/git-repo.ts";

/** Git that swaps the evidence directory for a link to elsewhere just before the patch is written. */
class Swapping extends Git {
  constructor(private readonly swap: () => Promise<void>) {
    super();
  }
  override async run(dir: string, args: readonly string[], o?: GitCall): Promise<GitResult> {
    if (o?.stdoutFd !== undefined) await this.swap();
    return super.run(dir, args, o);
  }
}

describe("evidence: the patch is written in the directory checked and held", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-evdir-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function setUp(name: string) {
    const repo = await makeRepo(join(dir, name, "repo"), { "a.txt": "a\n" });
    const ws = new GitWorkspace({ worktreesDir: join(dir, name, "worktrees") });
    const baseline = (await ws.baseline(repo))!;
    await writeFiles(repo, { "a.txt": "b\n" });
    const evidence = join(dir, name, "sheep", "evidence");
    const target = join(dir, name, "yours");
    await mkdir(evidence, { recursive: true });
    await mkdir(target);
    return { repo, ws, baseline, evidence, target };
  }

  it("evidence/ swapped for a link while the patch is written: nothing reaches the link's target", async () => {
    const { baseline, evidence, target } = await setUp("during");
    const git = new Swapping(async () => {
      await rename(evidence, `${evidence}.moved`);
      await symlink(target, evidence);
    });
    const end = { tree: (await new GitWorkspace({ worktreesDir: join(dir, "w") }).baseline(baseline.root))!.tree, at: new Date().toISOString() };
    await evidenceDiff(git, baseline, end, { patchPath: join(evidence, "p_1.patch"), inlineLines: 10 });
    assert.deepEqual(await readdir(target), [], "no file in the link's target");
    assert.deepEqual(await readdir(`${evidence}.moved`), ["p_1.patch"], "the patch is in the directory that was checked");
  });

  it("evidence/ already a link when the patch is written: refused, nothing reaches its target", async () => {
    const { ws, baseline, evidence, target } = await setUp("before");
    await rm(evidence, { recursive: true });
    await symlink(target, evidence);
    await assert.rejects(ws.diff(baseline, { patchPath: join(evidence, "p_1.patch"), inlineLines: 10 }), /not a real directory/);
    assert.deepEqual(await readdir(target), []);
  });
});
