/**
 * The panel's "For" (a SheepView's `since`) counts from the sheep's last change of state, not its
 * start: the core records the moment of each change (`stateSince`) where the state changes, and
 * state.json keeps it (issue 31, item 19).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { panelSheep } from "../../../src/panel/views.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { checkRecords } from "../../../src/stores/state-records.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };
const iso = (ms: number) => new Date(ms).toISOString();

function setup() {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock, livenessIntervalMs: 1000 });
  const since = (agentId: string) => panelSheep(shepherd, shepherd.registry.agents.get(agentId)!, undefined, undefined).since;
  return { world, clock, shepherd, since };
}

describe("the panel's since: the sheep's last change of state", () => {
  it("idle from its answer, blocked from its question, working from its prompt; never from its start", async () => {
    const { world, clock, shepherd, since } = setup();
    const a = await shepherd.start({ definition: def, cwd: "/", label: "a" });
    await clock.advance(7 * 60_000, 60_000);
    const p = await shepherd.prompt(a.agentId, "count the sheep");
    assert.equal(since(a.agentId), p.submittedAt, "working: from its prompt");
    await clock.advance(5000, 1000);
    world.answer(a.agentId, p.promptId, "40 sheep");
    const answeredAt = clock.now();
    const [r] = await shepherd.wait([p.promptId], { timeoutSec: 60 });
    assert.equal(r!.status, "completed");
    assert.equal(shepherd.registry.agents.get(a.agentId)!.state, "idle");
    assert.equal(since(a.agentId), iso(answeredAt), "idle: from when it answered, not its start 7 min before");

    await clock.advance(30_000, 1000);
    const q = await shepherd.prompt(a.agentId, "ask me");
    await clock.advance(40_000, 1000);
    world.say(a.agentId, { messageId: "m_bbbbbbbbbb", kind: "question", text: "north or south?", awaitReply: true, timeoutSec: 600 });
    const askedAt = clock.now();
    await shepherd.refreshFromFiles(new Set([a.agentId]));
    await settle();
    assert.equal(shepherd.registry.agents.get(a.agentId)!.state, "blocked");
    assert.equal(since(a.agentId), iso(askedAt), "blocked: from its question, not its prompt 40 s before");
    assert.notEqual(since(a.agentId), q.submittedAt);

    // Seen again in the same state: the clock goes on, it does not start over.
    await clock.advance(5000, 1000);
    await shepherd.refreshFromFiles(new Set([a.agentId]));
    assert.equal(since(a.agentId), iso(askedAt));
  });

  it("state.json keeps the moment; one that is not a time is dropped, the sheep's record kept", () => {
    const rec = {
      agentId: "a_0123456789",
      agent: "echo",
      label: "a",
      runtime: "tmux",
      paneId: "%1",
      cwd: "/",
      sessionPath: "/s.jsonl",
      createdAt: iso(0),
      owner: "s",
      state: "idle",
    };
    const loaded = (stateSince?: unknown) => {
      const out = checkRecords([stateSince === undefined ? { ...rec } : { ...rec, stateSince }], []);
      assert.deepEqual(out.rejected, []);
      return out.agents[0]!.stateSince;
    };
    assert.equal(loaded(iso(1000)), iso(1000));
    assert.equal(loaded(), undefined, "a record from before it was kept");
    assert.equal(loaded("yesterday"), undefined);
    assert.equal(loaded("x".repeat(1_000_000)), undefined);
    assert.equal(loaded(42), undefined);
  });
});
