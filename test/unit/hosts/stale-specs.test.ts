/**
 * A shepherd killed between prepare and the pane leaves the sheep's launch spec, forwarded
 * secrets and all, that no launcher ever reads (issue 31, item 7). Here and on a host (whose agent
 * serves a LocalSheepFiles): doctor reports a spec older than any start could hold one and that no
 * record knows, prune removes it with what its start wrote and says so; a young spec (a start on
 * its way) and a recorded sheep's files are left alone.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { herdChecks } from "../../../src/doctor/herd.ts";
import { hostLeftoverChecks } from "../../../src/doctor/run.ts";
import { RoutedRuntime } from "../../../src/hosts/runtime.ts";
import { RoutedSheepFiles } from "../../../src/hosts/routed-sheep-files.ts";
import { fileStartMarks } from "../../../src/hosts/start-marks.ts";
import { HostTable } from "../../../src/hosts/table.ts";
import { sheepDir, sheepLayout, stateDir } from "../../../src/protocol/layout.ts";
import type { LocalSheepFiles } from "../../../src/protocol/local-sheep-files.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { leftoverText, pruneText } from "../../../src/texts/format.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { testSheepFiles } from "../../support/local-sheep-files.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };
const CUT = "a_cutshort01";
const YOUNG = "a_onitsway01";

/** A start cut short: prepare wrote the spec (with a secret), then the shepherd died; `agedMin` minutes ago. */
async function cutShort(host: LocalSheepFiles, agentDir: string, agentId: string, agedMin: number): Promise<string> {
  await host.prepare({ agentId, definition: def, cwd: "/work", label: "cut", createdAt: new Date().toISOString() });
  const spec = sheepLayout(sheepDir(agentDir, agentId)).spec;
  const then = Date.now() / 1000 - agedMin * 60;
  await utimes(spec, then, then);
  return spec;
}

describe("launch specs a crash left between prepare and the pane", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-specs-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("here: doctor reports a stale one no record knows, prune removes it and says so; a young one stays", async () => {
    const agentDir = join(dir, "here");
    const host = testSheepFiles(agentDir, { env: { ANTHROPIC_API_KEY: "sk-secret" } });
    const stale = await cutShort(host, agentDir, CUT, 11);
    const young = await cutShort(host, agentDir, YOUNG, 1);

    const checks = await herdChecks({ stateDir: stateDir(agentDir), env: {}, records: [], ownerAlive: () => false });
    const found = checks.filter((c) => c.name === "stale launch spec");
    assert.equal(found.length, 1, JSON.stringify(checks));
    assert.match(found[0]!.detail, new RegExp(`${CUT}, which no record knows`));
    assert.equal(found[0]!.fix, "/shepherd prune");

    const world = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: world.runtime, files: host, owner: "me", clock: new FakeClock(), audit: { record: () => undefined } });
    assert.deepEqual((await shepherd.leftovers()).specs, [{ agentId: CUT }]);
    const out = await shepherd.prune();
    assert.deepEqual(out.specs, [{ agentId: CUT }]);
    assert.match(pruneText(out), new RegExp(`Removed the launch spec of ${CUT}, which no record knew`));
    assert.equal(existsSync(stale), false, "the stale spec (and its secret) is gone");
    assert.equal(existsSync(sheepDir(agentDir, CUT)), false, "with everything its start wrote");
    assert.equal(existsSync(young), true, "a start that may be on its way keeps its spec");
    const again = await herdChecks({ stateDir: stateDir(agentDir), env: {}, records: [], ownerAlive: () => false });
    assert.deepEqual(
      again.filter((c) => c.name.startsWith("stale launch spec")).map((c) => c.verdict),
      ["pass"],
    );
  });

  it("a recorded sheep's stale spec is not a leftover", async () => {
    const agentDir = join(dir, "recorded");
    const host = testSheepFiles(agentDir);
    const world = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", clock: new FakeClock(), audit: { record: () => undefined } });
    const rec = await shepherd.start({ definition: def, cwd: "/work", label: "kept" });
    const spec = await cutShort(host, agentDir, rec.agentId, 11);
    const checks = await herdChecks({ stateDir: stateDir(agentDir), env: {}, records: [...shepherd.registry.agents.values()], ownerAlive: () => false });
    assert.ok(!checks.some((c) => c.name === "stale launch spec"), JSON.stringify(checks));
    assert.equal(existsSync(spec), true);
  });

  it("on a host: found through the host's agent, reported for that host, removed there by prune", async () => {
    const hereDir = join(dir, "local");
    const gpuDir = join(dir, "gpu");
    const local = new MemoryWorld();
    const gpu = new MemoryWorld();
    const gpuHost = testSheepFiles(gpuDir, { env: { HF_TOKEN: "hf-secret" }, carryEnv: ["HF_TOKEN"] });
    const table = new HostTable({
      local: { runtime: local.runtime, files: testSheepFiles(hereDir) },
      hosts: ["gpu"],
      connect: () => ({ runtime: gpu.runtime, files: gpuHost, down: () => undefined, dir: async (p) => p ?? "/home/me", close: async () => undefined }),
      hostOf: () => undefined,
    });
    const stale = await cutShort(gpuHost, gpuDir, CUT, 11);
    const shepherd = new Shepherd({
      runtime: new RoutedRuntime(table),
      files: new RoutedSheepFiles(table),
      owner: "me",
      clock: new FakeClock(),
      audit: { record: () => undefined },
    });
    const checks = await hostLeftoverChecks(() => shepherd.leftovers());
    assert.deepEqual(
      checks.map((c) => [c.name, c.verdict]),
      [["host gpu: stale launch spec", "warn"]],
    );
    assert.match(checks[0]!.detail, new RegExp(CUT));
    const out = await shepherd.prune();
    assert.deepEqual(out.specs, [{ agentId: CUT, host: "gpu" }]);
    assert.match(pruneText(out), new RegExp(`Removed the launch spec of ${CUT} on host gpu`));
    assert.equal(existsSync(stale), false, "removed on the host, where it was");
    assert.deepEqual(await hostLeftoverChecks(() => shepherd.leftovers()), []);
  });

  it("looks only on the hosts this machine marked a start on, and says what it found once", async () => {
    const gpu = new MemoryWorld();
    const gpuDir = join(dir, "gpu2");
    const gpuHost = testSheepFiles(gpuDir);
    const asked: string[] = [];
    const starts = fileStartMarks(join(dir, "marks"), "me");
    const table = new HostTable({
      local: { runtime: new MemoryWorld().runtime, files: testSheepFiles(join(dir, "local2")) },
      hosts: ["gpu", "idle"],
      starts,
      connect: (name) => {
        asked.push(name);
        return { runtime: gpu.runtime, files: gpuHost, down: () => undefined, dir: async (p) => p ?? "/home/me", close: async () => undefined };
      },
      hostOf: () => undefined,
    });
    const shepherd = new Shepherd({ runtime: new RoutedRuntime(table), files: new RoutedSheepFiles(table), owner: "me", clock: new FakeClock() });
    // No start marked anywhere: looking for leftovers (as every session start does) connects to no host.
    assert.equal(leftoverText(await shepherd.leftovers()), undefined);
    assert.deepEqual(asked, []);
    // A start on gpu cut short: gpu is asked, the idle host still is not.
    await starts.mark(CUT, "gpu");
    await cutShort(gpuHost, gpuDir, CUT, 11);
    const found = await shepherd.leftovers();
    assert.deepEqual(asked, ["gpu"]);
    assert.deepEqual(found.specs, [{ agentId: CUT, host: "gpu" }]);
    assert.equal(
      leftoverText(found),
      "pi-shepherd: a shepherd stopped during a start left 1 launch spec that no sheep record knows: /shepherd doctor names them, /shepherd prune removes them.",
    );
    assert.equal(
      leftoverText({ specs: [], panes: [{ host: "gpu" }, { host: "gpu" }], worktrees: [{}] }),
      "pi-shepherd: a shepherd stopped during a start left 2 panes on gpu, 1 worktree that no sheep record knows: /shepherd doctor names them, /shepherd prune removes them.",
    );
  });
});
