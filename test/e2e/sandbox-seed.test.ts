/**
 * A sandboxed sheep's loader cache starts from the shepherd's own seed: pi-shepherd's sheep side and
 * nothing else, made by the shepherd in its state dir, bound read-only. Real pi in a real tmux pane
 * under real bubblewrap: inside, the seed holds the sheep extension's entries and none of the
 * machine's cache (a planted entry of "another project"), and the sheep's pi found every file it
 * loads there (its /tmp/jiti, the copy, gained nothing: it transpiled nothing).
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

describe("a sandboxed sheep's loader cache seed", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let scene: Scene;
  const planted = join(tmpdir(), "jiti", `other-project-planted-${process.pid}.0123abcd.mjs`);

  before(async () => {
    world = await e2eWorld("sandbox-seed");
    scene = world.scene({ env: { ...world.env } });
    mkdirSync(join(tmpdir(), "jiti"), { recursive: true });
    writeFileSync(planted, "another project's transpiled code\n");
  });

  after(async () => {
    rmSync(planted, { force: true });
    await world?.cleanup();
  });

  it("holds the sheep side only, from the shepherd's private dir, and the sheep's pi transpiles nothing", async () => {
    const r = await scene.ok({ action: "start", agent: "echo", label: "seeded", sandbox: true });
    const agent = r.details.agent as { agentId: string; sandboxed?: true };
    assert.equal(agent.sandboxed, true);
    const command =
      "ls /tmp/.pi-shepherd-jiti-seed | sort; echo ---; ls /tmp/jiti | sort; echo ---; echo x > /tmp/.pi-shepherd-jiti-seed/pwned && echo wrote || echo refused";
    const promptId = await scene.prompt(agent.agentId, directive({ rounds: [[{ name: "bash", arguments: { command } }]], tag: "seed-look" }));
    const item = await scene.wait(promptId, 120);
    assert.equal(item.status, "completed", item.error);
    const out =
      world!.model.log
        .filter((l) => l.tag === "seed-look")
        .at(-1)
        ?.toolTexts?.at(-1) ?? "";
    const [seedPart = "", copyPart = "", writePart = ""] = out.split(/^---$/m);
    const seedNames = seedPart
      .split("\n")
      .filter((n) => /\.[cm]?js$/.test(n))
      .sort();
    const copyNames = copyPart
      .split("\n")
      .filter((n) => /\.[cm]?js$/.test(n))
      .sort();
    assert.ok(
      seedNames.some((n) => /^extensions-sheep\.[0-9a-f]+\.mjs$/.test(n)),
      out,
    );
    assert.ok(seedNames.length > 10 && seedNames.length < 60, `a few dozen entries, not the machine's cache: ${seedNames.length}`);
    assert.ok(!out.includes("other-project-planted"), "nothing of the machine's cache reaches the sandbox");
    assert.deepEqual(copyNames, seedNames, "the sheep's pi found all it loads in the seed: it wrote no entry of its own");
    assert.match(writePart, /refused/, "the seed is read-only inside");

    // On the host: the shepherd's own seed, private, with exactly what the sheep saw.
    const root = join(world!.agentDir, "pi-shepherd", "jiti-seed");
    const [stamp, ...more] = readdirSync(root);
    assert.ok(stamp && more.length === 0, `one seed: ${readdirSync(root)}`);
    assert.equal(statSync(root).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(join(root, stamp)).sort(), seedNames);
    await scene.ok({ action: "close", agentId: agent.agentId });
  });
});
