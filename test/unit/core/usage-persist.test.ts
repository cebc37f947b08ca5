/**
 * The herd's totals across a reload and a restart (issue 34): what the herd spent is kept as a
 * tally in state.json (the real FileStateStore), written with the records it counted and taken
 * over by the shepherd that takes the records (its own after a reload, a dead one's after a
 * restart), once, without counting those records again; today rolls over at the local day's
 * end, across a reload too.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { systemClock } from "../../../src/core/herd/clock.ts";
import { MAX_CLOSED_KEPT, Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentId } from "../../../src/domain/ids.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FileStateStore } from "../../../src/stores/state-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a.md" };
const DAY = 24 * 3600 * 1000;

/** A clock that can be moved on by whole days. */
function shiftedClock() {
  const c = { shift: 0, now: () => Date.now() + c.shift, sleep: systemClock.sleep };
  return c;
}

async function spend(s: Shepherd, world: MemoryWorld, agentId: AgentId, usage: { input: number; output: number; cost: number }): Promise<void> {
  const p = await s.prompt(agentId, "work");
  world.mem(agentId).outbox.set(p.promptId, { promptId: p.promptId, status: "completed", text: "done", stopReason: "stop", usage });
  world.ring(agentId);
  await s.wait([p.promptId], { timeoutSec: 2 });
}

/** One sheep that spends, closed, then pushed out of the records by MAX_CLOSED_KEPT newer closed ones. */
async function spentAndDropped(s: Shepherd, world: MemoryWorld): Promise<AgentId> {
  const a = await s.start({ definition: def, cwd: "/" });
  await spend(s, world, a.agentId, { input: 100, output: 10, cost: 0.5 });
  await s.close(a.agentId);
  for (let i = 0; i < MAX_CLOSED_KEPT; i++) await s.close((await s.start({ definition: def, cwd: "/" })).agentId);
  return a.agentId;
}

const sums = (s: Shepherd) => {
  const u = s.usage();
  return { input: u.input, output: u.output, cost: u.cost, prompts: u.prompts, today: u.today.input };
};

describe("the herd's totals across reloads and restarts", () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-tally-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("a reload keeps what a closed sheep the records dropped spent, and counts a kept sheep once", async () => {
    const dir = join(root, "reload");
    const world = new MemoryWorld();
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store: new FileStateStore(dir), ownerAlive: () => true });
    await first.attach();
    const dropped = await spentAndDropped(first, world);
    const kept = await first.start({ definition: def, cwd: "/" });
    await spend(first, world, kept.agentId, { input: 7, output: 3, cost: 0.25 });
    await assert.rejects(first.status(dropped), /\[unknown_agent\]/, "the records let go of the first sheep");
    const before = sums(first);
    assert.deepEqual(before, { input: 107, output: 13, cost: 0.75, prompts: 2, today: 107 });
    await first.dispose();

    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store: new FileStateStore(dir), ownerAlive: () => true });
    await second.attach();
    assert.deepEqual(sums(second), before, "after the reload: the dropped sheep's 100 still counts, the kept one's 7 once");
    await spend(second, world, kept.agentId, { input: 1, output: 1, cost: 0 });
    assert.equal(second.usage().input, 108);
    await second.dispose();
    const file = JSON.parse(await readFile(join(dir, "state.json"), "utf8")) as { tallies: { owner: string; input: number }[] };
    assert.deepEqual(
      file.tallies.map((t) => [t.owner, t.input]),
      [["me", 108]],
      "one tally for the shepherd: every prompt it counted",
    );
  });

  it("a restart: the shepherd that adopts a dead one's records takes its tally once; a live one's is not taken", async () => {
    const dir = join(root, "restart");
    const world = new MemoryWorld();
    const alive = new Set(["old", "other"]);
    const ownerAlive = (o: string) => alive.has(o);
    const old = new Shepherd({ runtime: world.runtime, files: world.files, owner: "old", store: new FileStateStore(dir), ownerAlive });
    await old.attach();
    await spentAndDropped(old, world);
    // A dead shepherd's closed sheep still in the records is let go of at adoption: its spend stays counted.
    const closedKept = await old.start({ definition: def, cwd: "/" });
    await spend(old, world, closedKept.agentId, { input: 20, output: 2, cost: 0 });
    await old.close(closedKept.agentId);
    const other = new Shepherd({ runtime: world.runtime, files: world.files, owner: "other", store: new FileStateStore(dir), ownerAlive });
    await other.attach();
    await spentAndDropped(other, world);
    await old.dispose();
    // Still running, as far as the others know: its records and tally stay its own.
    await other.dispose();
    alive.delete("old");

    alive.add("new");
    const next = new Shepherd({ runtime: world.runtime, files: world.files, owner: "new", store: new FileStateStore(dir), ownerAlive });
    await next.attach();
    assert.deepEqual(sums(next), { input: 120, output: 12, cost: 0.5, prompts: 2, today: 120 }, "the dead shepherd's spend, not the live one's");
    await next.dispose();
    const file = JSON.parse(await readFile(join(dir, "state.json"), "utf8")) as { tallies: { owner: string; input: number }[] };
    assert.deepEqual(file.tallies.map((t) => [t.owner, t.input]).sort(), [
      ["new", 120],
      ["other", 100],
    ]);
    // A second shepherd starting now finds the old tally gone: it is never counted twice.
    alive.add("later");
    const later = new Shepherd({ runtime: world.runtime, files: world.files, owner: "later", store: new FileStateStore(dir), ownerAlive });
    await later.attach();
    assert.equal(later.usage().input, 0);
    await later.dispose();
  });

  it("today rolls over at the day's end, and a reload the next day keeps the whole but not yesterday's today", async () => {
    const dir = join(root, "day");
    const world = new MemoryWorld();
    const clock = shiftedClock();
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store: new FileStateStore(dir), ownerAlive: () => true, clock });
    await first.attach();
    await spentAndDropped(first, world);
    assert.deepEqual(sums(first), { input: 100, output: 10, cost: 0.5, prompts: 1, today: 100 });
    clock.shift = DAY;
    assert.deepEqual(sums(first), { input: 100, output: 10, cost: 0.5, prompts: 1, today: 0 }, "a new day starts at nothing");
    await first.dispose();
    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store: new FileStateStore(dir), ownerAlive: () => true, clock });
    await second.attach();
    assert.deepEqual(sums(second), { input: 100, output: 10, cost: 0.5, prompts: 1, today: 0 });
    clock.shift = 0;
    await second.dispose();
    const third = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store: new FileStateStore(dir), ownerAlive: () => true, clock });
    await third.attach();
    assert.equal(third.usage().today.input, 100, "yesterday's spend was kept by day: read back on its own day it is today's");
    await third.dispose();
  });
});
