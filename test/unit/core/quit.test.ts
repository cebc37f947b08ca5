/**
 * The shepherd quits (closeOnExit): idle sheep are closed; a sheep that works, or holds a result
 * nobody received, keeps running and stays recorded, so the next shepherd on the agent dir adopts
 * it and a wait gets the answer. One line says which were kept.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { quitText } from "../../../src/texts/quit.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup() {
  const world = new MemoryWorld();
  const store = new MemoryStore();
  const alive = new Set(["first"]);
  const make = (owner: string) =>
    new Shepherd({ runtime: world.runtime, files: world.files, owner, store, clock: new FakeClock(), ownerAlive: (o) => o === owner || alive.has(o) });
  const first = make("first");
  const start = (label: string) => first.start({ definition: def, cwd: "/work", label });
  /** The first shepherd's process ends: its quit, its dispose, and then its pid is gone. */
  const quitFirst = async () => {
    const q = await first.quit();
    await first.dispose();
    alive.delete("first");
    return q;
  };
  return { world, store, first, make, start, quitFirst };
}

describe("quitting the shepherd", () => {
  it("closes the idle sheep, keeps the working one running and recorded; the next shepherd adopts it and its wait gets the answer", async () => {
    const { world, store, make, start, quitFirst, first } = setup();
    const idle = await start("idle");
    const busy = await start("busy");
    const p = await first.prompt(busy.agentId, "take your time");
    const q = await quitFirst();
    assert.deepEqual(q.closed, [idle.agentId]);
    assert.deepEqual(q.kept, [{ agentId: busy.agentId, label: "busy", working: [p.promptId], unreceived: [] }]);
    assert.deepEqual(q.failed, []);
    assert.equal(world.panes.get(idle.paneId)?.alive, false, "the idle sheep's pane is closed");
    assert.equal(world.panes.get(busy.paneId)?.alive, true, "the working sheep's pane stays");
    assert.ok(!world.calls.includes(`close ${busy.paneId}`), "nothing closed the working sheep");
    const rec = store.state.agents.find((a) => a.agentId === busy.agentId);
    assert.deepEqual([rec?.state, rec?.owner, rec?.activePromptId], ["working", "first", p.promptId], "recorded as it was, under the shepherd that quit");
    assert.ok(
      store.state.prompts.some((x) => x.promptId === p.promptId && !x.settled),
      "its prompt is recorded, still pending",
    );
    assert.match(
      quitText(q) ?? "",
      new RegExp(
        `^pi-shepherd: left 1 sheep running for the next shepherd on this agent dir to take back: busy \\(${busy.agentId}, working on ${p.promptId}\\); closed 1 idle\\.$`,
      ),
    );

    const next = make("next");
    const report = await next.attach();
    assert.deepEqual(report.adopted, [busy.agentId], "adopted, not pruned");
    assert.deepEqual(report.pruned, []);
    world.answer(busy.agentId, p.promptId, "the slow answer");
    const [r] = await next.wait([p.promptId], { timeoutSec: 5 });
    assert.deepEqual([r?.status, r?.text], ["completed", "the slow answer"]);
  });

  it("keeps a sheep whose answer landed but reached nobody, and closes one whose answer a wait returned", async () => {
    const { world, make, start, quitFirst, first } = setup();
    const told = await start("told");
    const untold = await start("untold");
    const late = await start("late");
    const p1 = await first.prompt(told.agentId, "a");
    const p2 = await first.prompt(untold.agentId, "b");
    const p3 = await first.prompt(late.agentId, "c");
    world.answer(told.agentId, p1.promptId, "one");
    world.answer(untold.agentId, p2.promptId, "two");
    await first.wait([p1.promptId]);
    await first.status(untold.agentId); // settled from its file, but no wait returned it
    world.answer(late.agentId, p3.promptId, "three"); // landed just before the quit: settled by it
    const q = await quitFirst();
    assert.deepEqual(q.closed, [told.agentId]);
    assert.deepEqual(q.kept.map((k) => [k.label, k.working, k.unreceived]).sort(), [
      ["late", [], [p3.promptId]],
      ["untold", [], [p2.promptId]],
    ]);
    assert.equal(world.panes.get(untold.paneId)?.alive, true);
    const next = make("next");
    assert.deepEqual((await next.attach()).adopted.sort(), [untold.agentId, late.agentId].sort());
    const [r] = await next.wait([p2.promptId]);
    assert.deepEqual([r?.status, r?.text], ["completed", "two"]);
  });

  it("with nothing in flight every sheep is closed and nothing is said", async () => {
    const { start, quitFirst } = setup();
    const a = await start("a");
    const q = await quitFirst();
    assert.deepEqual([q.closed, q.kept], [[a.agentId], []]);
    assert.equal(quitText(q), undefined);
  });
});
