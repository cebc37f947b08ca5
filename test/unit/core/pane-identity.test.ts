/**
 * A pane id is not an identity: tmux numbers panes from the start again with each new server,
 * herdr reuses ids too. These sequences failed for users while every call-level test passed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup() {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "shepherd-1", clock, livenessIntervalMs: 1000, startTimeoutMs: 10_000 });
  return { world, clock, shepherd };
}

describe("core: sheep start again after the herd empties", () => {
  it("start, prompt, wait, close the last sheep, three times over, on reused pane ids", async () => {
    const s = setup();
    const panes: string[] = [];
    for (let round = 1; round <= 3; round++) {
      const a = await s.shepherd.start({ definition: def, cwd: "/work" });
      panes.push(a.paneId);
      const p = await s.shepherd.prompt(a.agentId, `round ${round}`);
      s.world.answer(a.agentId, p.promptId, `answer ${round}`);
      const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
      assert.equal(r!.status, "completed", r!.error);
      assert.equal(r!.text, `answer ${round}`);
      const closed = await s.shepherd.close(a.agentId);
      assert.equal(closed.alreadyClosed, false);
    }
    assert.deepEqual(panes, ["%1", "%1", "%1"], "the world reuses pane ids, as a new tmux server does");
  });

  it("a dead sheep's reused pane id belongs to the new sheep: the old one is gone, the new one alive", async () => {
    const s = setup();
    const old = await s.shepherd.start({ definition: def, cwd: "/work" });
    const p = await s.shepherd.prompt(old.agentId, "work");
    s.world.killPane(old.agentId); // the server ends with its last pane
    const fresh = await s.shepherd.start({ definition: def, cwd: "/work" });
    assert.equal(fresh.paneId, old.paneId);
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.status, "failed");
    assert.match(r!.error!, /^\[pane_gone\]/);
    const st = await s.shepherd.status(fresh.agentId);
    assert.equal(st.paneAlive, true);
    assert.equal(st.state, "idle");
    const q = await s.shepherd.prompt(fresh.agentId, "more");
    s.world.answer(fresh.agentId, q.promptId, "fine");
    assert.equal((await s.shepherd.wait([q.promptId], { timeoutSec: 5 }))[0]!.text, "fine");
  });
});

describe("core: labels", () => {
  it("two starts in one turn never share a label", async () => {
    const s = setup();
    const [a, b, c] = await Promise.all([
      s.shepherd.start({ definition: def, cwd: "/work" }),
      s.shepherd.start({ definition: def, cwd: "/work" }),
      s.shepherd.start({ definition: def, cwd: "/work", label: "worker-2" }).catch((e: Error) => e),
    ]);
    assert.equal(a!.label, "worker");
    assert.equal(b!.label, "worker-2");
    assert.ok(c instanceof Error && /^\[invalid_params\] label "worker-2" is already used/.test(c.message), String(c));
  });

  it("a failed start frees its label", async () => {
    const s = setup();
    s.world.onLaunch = "exit";
    await assert.rejects(s.shepherd.start({ definition: def, cwd: "/work", label: "solo" }), /^ShepherdError: \[start_failed\]/);
    s.world.onLaunch = "ready";
    assert.equal((await s.shepherd.start({ definition: def, cwd: "/work", label: "solo" })).label, "solo");
  });

  for (const [what, label] of [
    ["an escape sequence", "red\u001b[31mtext"],
    ["a newline", "two\nlines"],
    ["a C1 control (CSI)", "x\u009b2J"],
    ["a bidi override", "abc\u202edcba"],
    ["more than 64 characters", "x".repeat(65)],
    ["only spaces", "   "],
  ] as const) {
    it(`refuses a label with ${what}`, async () => {
      const s = setup();
      await assert.rejects(s.shepherd.start({ definition: def, cwd: "/work", label }), /^ShepherdError: \[invalid_params\] label must/);
      assert.equal(s.world.calls.filter((c) => c.startsWith("create")).length, 0, "nothing was created");
    });
  }

  it("takes a plain label of 64 characters, unicode included", async () => {
    const s = setup();
    const label = "ünï-".repeat(16);
    assert.equal((await s.shepherd.start({ definition: def, cwd: "/work", label })).label, label);
  });
});
