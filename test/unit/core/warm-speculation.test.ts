/**
 * Speculative start (issue 36) in the core, over the in-memory world: sheep booted while the
 * model still writes a call are the ones the call takes (waiting for one still booting), never more
 * than the call names nor beyond `memoryMb`, and a call that never comes leaves them to the pool.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { WARM_SHEEP_MB } from "../../../src/domain/bounds.ts";
import { Shepherd, type WarmConfig } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const worker: AgentDefinition = { name: "worker", description: "does work", source: "user", path: "/agents/worker.md", model: "m1" };
const scout: AgentDefinition = { name: "scout", description: "looks", source: "bundled", path: "/bundled/scout.md" };

const open: Shepherd[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.closeWarm();
});

function setup(memoryMb = 4 * WARM_SHEEP_MB, defs: AgentDefinition[] = [worker, scout]) {
  const world = new MemoryWorld();
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: "shepherd-1",
    clock: new FakeClock(),
    livenessIntervalMs: 1000,
    startTimeoutMs: 10_000,
  });
  open.push(shepherd);
  const config: WarmConfig = {
    sizes: {},
    memoryMb,
    cwd: "/work",
    placement: "tab",
    direction: "right",
    definitions: async () => defs,
    checkEveryMs: 3_600_000,
  };
  shepherd.keepWarm(config);
  return { world, shepherd, config };
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`never: ${what}`);
}

const creates = (w: MemoryWorld) => w.calls.filter((c) => c.startsWith("create ")).length;
const warmOf = (s: Shepherd, name: string) => s.warm().counts[name] ?? { ready: 0, starting: 0 };

describe("speculative start", () => {
  it("boots what a call names while it streams, and the call takes those sheep without a boot of its own", async () => {
    const { world, shepherd } = setup();
    await shepherd.speculate([{ name: "worker", count: 2 }]);
    // The same want again (the next delta of the same call) boots nothing more.
    await shepherd.speculate([{ name: "worker", count: 2 }]);
    await until(() => warmOf(shepherd, "worker").ready === 2, "two workers booted ahead");
    assert.equal(creates(world), 2);
    assert.deepEqual(await shepherd.herd(), [], "sheep booted ahead are in no view until a start takes them");
    const ahead = new Set(shepherd.registry.warm.keys());
    const [a, b] = await Promise.all([
      shepherd.start({ definition: worker, cwd: "/work", placement: "tab", label: "a" }),
      shepherd.start({ definition: worker, cwd: "/work", placement: "tab", label: "b" }),
    ]);
    assert.ok(ahead.has(a.agentId) && ahead.has(b.agentId) && a.agentId !== b.agentId, "each start took one of the sheep booted ahead");
    assert.equal(creates(world), 2, "no start booted a sheep of its own");
  });

  it("a start that comes while its sheep still boots waits for that sheep instead of booting another", async () => {
    const { world, shepherd } = setup();
    world.onLaunch = "never";
    await shepherd.speculate([{ name: "worker", count: 1 }]);
    await until(() => shepherd.registry.warm.size === 1, "the boot has its record");
    const [aheadId] = [...shepherd.registry.warm.keys()];
    const started = shepherd.start({ definition: worker, cwd: "/work", placement: "tab", label: "a" });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(creates(world), 1, "the start did not boot its own while one booted for it");
    world.mem(aheadId!).snapshot.ready = { pid: 4242, readyAt: new Date().toISOString() };
    world.ring(aheadId!);
    const rec = await started;
    assert.equal(rec.agentId, aheadId);
    assert.equal(creates(world), 1);
  });

  it("never boots more than the call names, nor beyond the pool's memory", async () => {
    const { world, shepherd } = setup(3 * WARM_SHEEP_MB);
    await shepherd.speculate([
      { name: "worker", count: 2 },
      { name: "scout", count: 5 },
    ]);
    await until(() => creates(world) === 3, "three boots");
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(creates(world), 3, "warmMemory holds three sheep: no fourth boots");
    assert.equal(warmOf(shepherd, "worker").ready + warmOf(shepherd, "worker").starting, 2);
    await shepherd.speculate([{ name: "scout", count: 5 }]);
    assert.equal(creates(world), 3, "a full pool boots nothing more for a later delta");
  });

  it("boots nothing for a name no definition has, or with no pool (warmMemory 0)", async () => {
    const a = setup();
    await a.shepherd.speculate([{ name: "nobody", count: 2 }]);
    assert.equal(creates(a.world), 0);
    const b = setup(0);
    await b.shepherd.speculate([{ name: "worker", count: 1 }]);
    assert.equal(creates(b.world), 0);
  });

  it("a sheep a call did not take stays by the pool's rules: kept within memory, then handed to a later start", async () => {
    const { world, shepherd } = setup();
    await shepherd.speculate([{ name: "scout", count: 1 }]);
    await until(() => warmOf(shepherd, "scout").ready === 1, "a scout booted ahead");
    // The call turned out to start a worker: it boots one (none of its kind was ahead).
    await shepherd.start({ definition: worker, cwd: "/work", placement: "tab", label: "w" });
    assert.equal(creates(world), 2);
    assert.equal(warmOf(shepherd, "scout").ready, 1, "the scout is kept (sizes {} but within warmMemory)");
    const later = await shepherd.start({ definition: scout, cwd: "/work", placement: "tab", label: "s" });
    assert.equal(creates(world), 2, "a later start of that kind takes it");
    assert.equal(later.label, "s");
  });

  it("sheep no call took are closed by the pool's next pass once the pool is over its memory", async () => {
    const { world, shepherd, config } = setup();
    await shepherd.speculate([{ name: "worker", count: 2 }]);
    await until(() => warmOf(shepherd, "worker").ready === 2, "two workers booted ahead");
    // The call never ran; the person lowers warmMemory below what the pool holds.
    shepherd.keepWarm({ ...config, memoryMb: WARM_SHEEP_MB });
    await until(() => shepherd.registry.warm.size === 0, "the pool closed what it could not keep");
    assert.equal(world.calls.filter((c) => c.startsWith("close ")).length, 2, "both panes closed");
  });

  it("never boots a definition the pool does not hold: a project's agent is not among them", async () => {
    // The pool's definitions are the user's and the bundled ones (session/begin.ts poolDefinitions);
    // a name only a repository defines has no definition here, whatever the streaming call names.
    const projectOnly: AgentDefinition = { name: "proj", description: "from the repo", source: "project", path: "/work/.pi/agents/proj.md" };
    const { world, shepherd } = setup(4 * WARM_SHEEP_MB, [worker]);
    await shepherd.speculate([{ name: projectOnly.name, count: 1 }]);
    assert.equal(creates(world), 0);
  });

  it("a later delta that names more counts a sheep still booting once, and boots the rest", async () => {
    const { world, shepherd } = setup();
    world.onLaunch = "never";
    await shepherd.speculate([{ name: "worker", count: 1 }]);
    await until(() => shepherd.registry.warm.size === 1, "the first boot has its record");
    await shepherd.speculate([{ name: "worker", count: 2 }]);
    await until(() => creates(world) === 2, "a second boot for the second task");
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(creates(world), 2, "two in all: the one booting counted once");
  });
});
