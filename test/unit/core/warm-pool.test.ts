/**
 * The warm pool in the core, over the in-memory world: which starts take a warm sheep, which
 * boot one, and that a dead, stale or unwanted warm sheep is closed, never handed out.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { Shepherd, type WarmConfig } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const worker: AgentDefinition = { name: "worker", description: "does work", source: "user", path: "/agents/worker.md", tools: ["read"], model: "m1" };
const scout: AgentDefinition = { name: "scout", description: "looks", source: "bundled", path: "/bundled/scout.md" };

const open: Shepherd[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.closeWarm();
});

function setup(o: { store?: MemoryStore; world?: MemoryWorld; owner?: string } = {}) {
  const world = o.world ?? new MemoryWorld();
  const clock = new FakeClock();
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: o.owner ?? "shepherd-1",
    clock,
    livenessIntervalMs: 1000,
    startTimeoutMs: 10_000,
    ...(o.store ? { store: o.store, ownerAlive: () => false } : {}),
  });
  open.push(shepherd);
  let defs = [worker, scout];
  const config = (sizes: Record<string, number>, checkEveryMs = 3_600_000): WarmConfig => ({
    sizes,
    cwd: "/work",
    placement: "tab",
    direction: "right",
    definitions: async () => defs,
    checkEveryMs,
  });
  return {
    world,
    clock,
    shepherd,
    config,
    setDefinitions: (d: AgentDefinition[]) => {
      defs = d;
    },
  };
}

/** Lets the pool's background work run until `ok` holds (its refill after a take looks every 250 ms). */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`never: ${what}`);
}

/** The same, moving the shepherd's clock as it goes: for work that sleeps on it. */
async function untilTicking(clock: FakeClock, ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (ok()) return;
    await clock.advance(100);
  }
  assert.fail(`never: ${what}`);
}

const ready = (s: Shepherd, name: string) => s.warm().counts[name]?.ready ?? 0;
const creates = (w: MemoryWorld) => w.calls.filter((c) => c.startsWith("create ")).length;

describe("warm pool", () => {
  it("fills to its sizes in the background; warm sheep are in no view of the herd", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 2, scout: 1 }));
    await until(() => ready(s.shepherd, "worker") === 2 && ready(s.shepherd, "scout") === 1, "the pool is full");
    assert.equal(creates(s.world), 3);
    assert.deepEqual(await s.shepherd.herd(), [], "herd lists no warm sheep");
    assert.deepEqual(s.shepherd.views(), []);
    assert.equal(s.shepherd.registry.agents.size, 0);
    assert.equal(s.shepherd.registry.liveByLabel("worker").length, 0, "a warm sheep holds no label a person could pick");
  });

  it("a matching start takes a warm sheep without booting one, names it, and the pool refills", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const [warmId] = [...s.shepherd.registry.warm.keys()];
    const before = creates(s.world);
    const started = await s.shepherd.start({ definition: { ...worker }, cwd: "/work", placement: "tab", label: "w1" });
    assert.equal(started.agentId, warmId, "the warm sheep is the one returned");
    assert.equal(started.label, "w1");
    assert.equal(creates(s.world) - before <= 1, true);
    assert.ok(s.world.calls.includes(`relabel ${started.paneId} w1 tab`), "its pane is named after its label");
    assert.equal(s.world.mem(started.agentId).card?.label, "w1", "its resume card too");
    assert.equal(s.world.prepared.length, 1 + (creates(s.world) - before), "no sheep was prepared for this start");
    const [h] = await s.shepherd.herd();
    assert.equal(h?.agentId, warmId);
    assert.equal(h?.state, "idle");
    await until(() => ready(s.shepherd, "worker") === 1 && !s.shepherd.registry.warm.has(warmId!), "the pool refilled");
    // It works like any sheep.
    const p = await s.shepherd.prompt(started.agentId, "go");
    s.world.answer(started.agentId, p.promptId, "done");
    assert.equal((await s.shepherd.wait([p.promptId], { timeoutSec: 5 }))[0]!.text, "done");
  });

  it("starts that do not match boot a sheep of their own", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const [warmId] = [...s.shepherd.registry.warm.keys()];
    const misses = [
      { definition: worker, cwd: "/elsewhere" },
      { definition: worker, cwd: "/work", model: "m2" },
      { definition: { ...worker, tools: ["read", "bash"] }, cwd: "/work" },
      { definition: { ...worker, systemPrompt: "be brief" }, cwd: "/work" },
      { definition: worker, cwd: "/work", placement: "pane" as const },
      { definition: scout, cwd: "/work" },
    ];
    for (const req of misses) {
      const started = await s.shepherd.start(req);
      assert.notEqual(started.agentId, warmId, `not taken by ${JSON.stringify(req)}`);
    }
    assert.ok(s.shepherd.registry.warm.has(warmId!), "the warm sheep is still in the pool");
    // The same model named by the call is still a match.
    const taken = await s.shepherd.start({ definition: worker, cwd: "/work", model: "m1" });
    assert.equal(taken.agentId, warmId);
  });

  it("a warm sheep whose pane died is closed and replaced, never handed out", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const [deadId] = [...s.shepherd.registry.warm.keys()];
    s.world.killPane(deadId!);
    const started = await s.shepherd.start({ definition: worker, cwd: "/work" });
    assert.notEqual(started.agentId, deadId);
    assert.equal((await s.shepherd.status(started.agentId)).paneAlive, true);
    assert.ok(!s.shepherd.registry.warm.has(deadId!), "the dead one left the pool");
    assert.ok(s.world.calls.includes(`discard ${deadId}`), "and its files are gone");
    await until(() => ready(s.shepherd, "worker") === 1, "a new warm worker replaced it");
  });

  it("a warm sheep whose pi exited is not handed out either", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const [deadId] = [...s.shepherd.registry.warm.keys()];
    s.world.exitPi(deadId!, { code: 1, signal: null });
    const started = await s.shepherd.start({ definition: worker, cwd: "/work" });
    assert.notEqual(started.agentId, deadId);
  });

  it("a changed definition closes its warm sheep and warms the new one", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const [oldId] = [...s.shepherd.registry.warm.keys()];
    const changed = { ...worker, systemPrompt: "new instructions" };
    s.setDefinitions([changed, scout]);
    // The start reads the file as it is now: the old sheep does not match it.
    const cold = await s.shepherd.start({ definition: changed, cwd: "/work" });
    assert.notEqual(cold.agentId, oldId);
    await until(() => !s.shepherd.registry.warm.has(oldId!) && ready(s.shepherd, "worker") === 1, "the pool holds the new definition");
    const taken = await s.shepherd.start({ definition: changed, cwd: "/work" });
    assert.ok(taken.agentId !== oldId && taken.agentId !== cold.agentId, "a sheep warmed from the new file is taken");
  });

  it("a smaller pool closes what it no longer wants; closeWarm closes the rest", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 2, scout: 1 }));
    await until(() => ready(s.shepherd, "worker") === 2 && ready(s.shepherd, "scout") === 1, "full");
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1 && ready(s.shepherd, "scout") === 0 && s.shepherd.registry.warm.size === 1, "shrunk");
    await s.shepherd.closeWarm();
    assert.equal(s.shepherd.registry.warm.size, 0);
    assert.equal([...s.world.panes.values()].filter((p) => p.alive).length, 0, "no pane is left running");
  });

  it("a warm sheep whose pane cannot be closed stays recorded, is never handed out, and is closed once it can be", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const [id] = [...s.shepherd.registry.warm.keys()];
    const paneId = s.shepherd.registry.warm.get(id!)!.paneId;
    s.world.closeFails = true;
    s.shepherd.keepWarm(s.config({}));
    // Closing waits (on the shepherd's clock) for the pane to go before it gives up on it.
    await untilTicking(s.clock, () => s.shepherd.registry.warm.get(id!)?.state === "exited", "its close failed");
    assert.equal(s.world.panes.get(paneId)!.alive, true);
    assert.equal(ready(s.shepherd, "worker"), 0, "it is not counted as ready");
    assert.ok(!s.world.calls.includes(`discard ${id}`), "its files stay while its pane runs");
    s.shepherd.keepWarm(s.config({ worker: 1 }));
    const started = await s.shepherd.start({ definition: worker, cwd: "/work" });
    assert.notEqual(started.agentId, id, "never handed out");
    s.world.closeFails = false;
    let closed = false;
    const closing = s.shepherd.closeWarm().then(() => (closed = true));
    await untilTicking(s.clock, () => closed, "the pool closed");
    await closing;
    assert.equal(s.world.panes.get(paneId)!.alive, false, "closed once the multiplexer answers");
    assert.ok(!s.shepherd.registry.warm.has(id!));
    assert.ok(s.world.calls.includes(`discard ${id}`));
  });

  it("the replacement of a taken sheep boots once the herd's sheep stopped working", async () => {
    const s = setup();
    // The pool's own check comes round often here: it too must not boot a pi beside the work.
    s.shepherd.keepWarm(s.config({ worker: 1 }, 100));
    await until(() => ready(s.shepherd, "worker") === 1, "one warm worker");
    const before = creates(s.world);
    const taken = await s.shepherd.start({ definition: worker, cwd: "/work" });
    const p = await s.shepherd.prompt(taken.agentId, "long work");
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(creates(s.world), before, "no pi boots beside the work");
    s.world.answer(taken.agentId, p.promptId, "done");
    await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    await until(() => ready(s.shepherd, "worker") === 1, "refilled once the work was done");
  });

  it("a name with no definition is reported, not warmed", async () => {
    const s = setup();
    s.shepherd.keepWarm(s.config({ ghost: 1 }));
    await until(() => s.shepherd.warm().problems.ghost !== undefined, "the problem is known");
    assert.match(s.shepherd.warm().problems.ghost!, /no agent definition named "ghost"/);
    assert.equal(creates(s.world), 0);
  });

  it("warm sheep are written to the state file, and a shepherd after a crash closes them", async () => {
    const store = new MemoryStore();
    const world = new MemoryWorld();
    const a = setup({ store, world, owner: "shepherd-a" });
    a.shepherd.keepWarm(a.config({ worker: 2 }));
    await until(() => ready(a.shepherd, "worker") === 2, "full");
    await until(() => store.state.agents.filter((r) => r.warm).length === 2, "written");
    store.dead.add("shepherd-a"); // it crashed: its pool is still running
    const b = setup({ store, world, owner: "shepherd-b" });
    const report = await b.shepherd.attach();
    assert.deepEqual(report.adopted, [], "warm sheep are not adopted into the herd");
    assert.equal([...world.panes.values()].filter((p) => p.alive).length, 0, "their panes were closed");
    assert.equal(store.state.agents.filter((r) => r.warm).length, 0, "and the state file let go of them");
  });
});
