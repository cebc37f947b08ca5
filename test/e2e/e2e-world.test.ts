/**
 * The fixture every end-to-end file stands on leaves nothing behind: not after a test, and not
 * when its own setup fails part of the way, where the file's after() has no handle to end.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { e2eWorld } from "../support/e2e-world.ts";
import { git } from "../support/git-repo.ts";

const tmuxDirs = async () => (await readdir(tmpdir())).filter((n) => n.startsWith("pi-shepherd-tmux-") || n.startsWith("pi-shepherd-sock-"));
const servers = () => process.getActiveResourcesInfo().filter((r) => r === "TCPServerWrap").length;

describe("the end-to-end world", { timeout: 120_000 }, () => {
  it("a setup that fails after the tmux server and the model started ends both and removes its dirs", async () => {
    const [tmuxBefore, serversBefore] = [await tmuxDirs(), servers()];
    const name = `world-fails-${process.pid}`;
    // An agent file in a directory that does not exist: the agent dir step throws.
    await assert.rejects(e2eWorld(name, { agent: { agents: { "missing/echo.md": "x" } } }), { code: "ENOENT" });
    assert.deepEqual(
      (await readdir(tmpdir())).filter((n) => n.startsWith(`pi-shepherd-${name}-`)),
      [],
    );
    assert.deepEqual(
      (await tmuxDirs()).filter((n) => !tmuxBefore.includes(n)),
      [],
      "the private tmux's dir (and so its server) is gone",
    );
    assert.equal(servers(), serversBefore, "the scripted model no longer listens");
  });

  it("cleanup stops the shepherds, then ends tmux, the model and the dirs; a second cleanup does nothing", async () => {
    for (const tmux of ["server", "socket"] as const) {
      const serversBefore = servers();
      const world = await e2eWorld("world-ends", { tmux, work: "w" });
      assert.ok(world.cwd.endsWith("/w") && existsSync(world.cwd));
      const scene = world.scene();
      const plain = world.shepherd();
      let deferred = 0;
      world.defer(() => deferred++);
      await world.cleanup();
      await world.cleanup();
      assert.equal(deferred, 1);
      assert.notEqual(scene.shepherd.proc.exitCode ?? scene.shepherd.proc.signalCode, null, "the scene's shepherd ended");
      assert.notEqual(plain.proc.exitCode ?? plain.proc.signalCode, null, "the shepherd ended");
      assert.equal(existsSync(world.dir), false);
      assert.equal(existsSync(world.tmux.dir), false);
      assert.equal(servers(), serversBefore, "the scripted model no longer listens");
    }
  });

  it("what the options add ends too: more providers, a fake herdr, a TUI shepherd; the work dir is a repository", async () => {
    const serversBefore = servers();
    let prepared = "";
    const world = await e2eWorld("world-options", {
      prepare: (dir) => {
        prepared = dir;
      },
      agentDirName: "odd name/agent",
      providers: ["other"],
      herdr: true,
      repo: { "a.txt": "a\n" },
    });
    assert.equal(prepared, world.dir);
    assert.equal(world.agentDir, join(world.dir, "odd name", "agent"));
    assert.ok(world.cwd.endsWith("/work"));
    assert.equal(await git(world.cwd, "ls-files"), "a.txt\n");
    assert.equal(world.env.PI_SHEPHERD_RUNTIME, "herdr");
    assert.equal(world.env.HERDR_PANE_ID, world.herdr!.root.pane_id);
    const models = JSON.parse(await readFile(join(world.agentDir, "models.json"), "utf8")) as { providers: Record<string, { baseUrl: string }> };
    assert.equal(models.providers.other!.baseUrl, world.providers.other!.baseUrl);
    const tui = await world.tui();
    await world.cleanup();
    assert.equal(existsSync(tui.dir), false, "the TUI's tmux dir (and so its server) is gone");
    assert.equal(existsSync(world.herdr!.fake.stateDir), false, "the fake herdr's dir (and so its tmux server) is gone");
    assert.equal(servers(), serversBefore, "no scripted model listens");
  });
});
