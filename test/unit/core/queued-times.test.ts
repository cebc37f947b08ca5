/**
 * A follow-up's times in the records and the panel's prompt list, on the real core over the
 * in-memory world and a fake clock: queued, it has not started; it starts when the prompt before
 * it settles (the sheep takes it then), not when it was sent. The same with real pi: the
 * queued-times e2e.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { panelPrompts } from "../../../src/panel/views.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def = { name: "echo", description: "d", source: "user" as const, path: "/agents/echo.md" };

describe("a queued follow-up's times", () => {
  it("has no startedAt while queued, and starts when the prompt before it settles, not when it was sent", async () => {
    const world = new MemoryWorld();
    const clock = new FakeClock();
    const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock });
    try {
      const a = await s.start({ definition: def, cwd: "/work", label: "alpha" });
      const p1 = await s.prompt(a.agentId, "one");
      await clock.advance(1000, 1000);
      const p2 = await s.prompt(a.agentId, "two", { deliverAs: "followUp" });
      const rec = s.registry.agents.get(a.agentId)!;
      const listed = () => new Map(panelPrompts(s, rec).map((p) => [p.promptId, p]));
      assert.equal(listed().get(p2.promptId)?.status, "queued");
      assert.equal(listed().get(p2.promptId)?.startedAt, undefined, "a queued follow-up has not started");
      assert.equal(listed().get(p1.promptId)?.startedAt, p1.submittedAt, "a prompt never queued started when it was sent");

      await clock.advance(4000, 4000);
      world.answer(a.agentId, p1.promptId, "1");
      const [r1] = await s.wait([p1.promptId], { timeoutSec: 0 });
      assert.equal(r1?.status, "completed");
      const taken = new Date(clock.now()).toISOString();
      assert.equal(s.registry.prompts.get(p2.promptId)?.startedAt, taken, "it started when the prompt before it settled");
      assert.equal(listed().get(p2.promptId)?.status, "working");
      assert.equal(listed().get(p2.promptId)?.startedAt, taken);
      assert.ok(Date.parse(taken) > Date.parse(p2.submittedAt), "later than it was sent");
    } finally {
      await s.dispose();
    }
  });
});
