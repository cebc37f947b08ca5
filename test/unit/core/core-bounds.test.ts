/** A shepherd that runs for days keeps a bounded record, in memory and in the state file. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_CLOSED_KEPT, MAX_SETTLED_KEPT, Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { parseAgentId, type PromptId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a.md" };

describe("bounded records", () => {
  it("keeps the newest closed sheep and the newest settled prompts of each sheep", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store, ownerAlive: () => true });
    const closed: string[] = [];
    for (let i = 0; i < MAX_CLOSED_KEPT + 6; i++) {
      const a = await s.start({ definition: def, cwd: "/" });
      await s.close(a.agentId);
      closed.push(a.agentId);
    }
    const busy = await s.start({ definition: def, cwd: "/" });
    const prompts: PromptId[] = [];
    for (let i = 0; i < MAX_SETTLED_KEPT + 5; i++) {
      const p = await s.prompt(busy.agentId, `n${i}`);
      world.answer(busy.agentId, p.promptId, `a${i}`);
      await s.wait([p.promptId], { timeoutSec: 1 });
      prompts.push(p.promptId);
    }
    const pending = await s.prompt(busy.agentId, "still working");
    await s.status(busy.agentId); // any change writes through

    const kept = [...s.registry.agents.values()].filter((a) => a.state === "closed").length;
    assert.equal(kept, MAX_CLOSED_KEPT);
    assert.equal(store.state.agents.filter((a) => a.state === "closed").length, MAX_CLOSED_KEPT);
    const mine = store.state.prompts.filter((p) => p.agentId === busy.agentId);
    assert.equal(mine.filter((p) => p.settled).length, MAX_SETTLED_KEPT);
    assert.ok(
      mine.some((p) => p.promptId === pending.promptId && !p.settled),
      "an unsettled prompt is never dropped",
    );
    // the newest survive, the oldest answer as unknown
    assert.equal((await s.status(parseAgentId(closed.at(-1)!))).state, "closed");
    await assert.rejects(s.status(parseAgentId(closed[0]!)), /\[unknown_agent\]/);
    assert.equal((await s.wait([prompts.at(-1)!], { timeoutSec: 0 }))[0]!.text, `a${MAX_SETTLED_KEPT + 4}`);
    assert.match((await s.wait([prompts[0]!], { timeoutSec: 0 }))[0]!.error!, /^\[unknown_prompt\]/);
  });

  it("a dead shepherd's closed sheep are dropped from the file, not adopted from owner to owner", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const alive = new Set(["first"]);
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "first", store, ownerAlive: (o) => alive.has(o) });
    const a = await first.start({ definition: def, cwd: "/" });
    const b = await first.start({ definition: def, cwd: "/" });
    await first.close(a.agentId);
    first.dispose();
    alive.delete("first");
    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "second", store, ownerAlive: (o) => o === "second" });
    const report = await second.attach();
    assert.deepEqual(report.adopted, [b.agentId]);
    assert.deepEqual(
      store.state.agents.map((r) => r.agentId),
      [b.agentId],
    );
  });
});
