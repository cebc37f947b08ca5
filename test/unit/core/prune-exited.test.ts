/**
 * prune and a sheep whose pi exited while its pane stayed (tmux's remain-on-exit, herdr's shell):
 * status says `exited`, so prune closes that dead pane and names the sheep, instead of saying
 * every pane is alive.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import type { AuditEvent } from "../../../src/ports/audit.ts";
import { pruneText } from "../../../src/texts/format.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup() {
  const world = new MemoryWorld();
  const events: AuditEvent[] = [];
  const clock = new FakeClock();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", clock, audit: { record: (e) => events.push(e) } });
  /** A prune whose pane would not close waits on the clock for it (see confirmGone). */
  const pruneOnTime = async () => {
    const run = shepherd.prune();
    await clock.advance(5000);
    return run;
  };
  return { world, shepherd, events, clock, pruneOnTime, start: (label: string) => shepherd.start({ definition: def, cwd: "/work", label }) };
}

describe("prune after a sheep's pi exited", () => {
  it("closes the dead pane of the exited sheep, names it and how pi ended, fails what it owed, and leaves a live sheep alone", async () => {
    const { world, shepherd, events, start } = setup();
    const dead = await start("fixer");
    const live = await start("scout");
    const p = await shepherd.prompt(dead.agentId, "fix it");
    world.exitPi(dead.agentId, { code: null, signal: "SIGKILL" });
    const st = await shepherd.status(dead.agentId);
    assert.deepEqual([st.state, st.runtimeStatus], ["exited", "pi exited (signal SIGKILL)"]);
    assert.equal(world.panes.get(dead.paneId)?.alive, true, "the pane stays, as tmux keeps it");

    const out = await shepherd.prune();
    assert.deepEqual(out.removed, [dead.agentId]);
    assert.deepEqual(out.exited, [{ agentId: dead.agentId, label: "fixer", exit: "signal SIGKILL" }]);
    assert.deepEqual(out.unclosed, []);
    assert.equal(world.panes.get(dead.paneId)?.alive, false, "its dead pane was closed");
    assert.ok(world.calls.includes(`close ${dead.paneId}`));
    assert.equal(world.panes.get(live.paneId)?.alive, true, "the live sheep's pane is untouched");
    assert.ok(shepherd.registry.agents.has(live.agentId));
    assert.ok(!shepherd.registry.agents.has(dead.agentId), "the exited sheep is dropped");
    assert.equal(pruneText(out), `Closed the dead pane of fixer (${dead.agentId}) and pruned it: its pi had exited (signal SIGKILL).`);
    const result = events.find((e) => e.event === "result" && e.promptId === p.promptId);
    assert.equal(result?.status, "failed");
    assert.match(result?.error ?? "", /^\[pi_exited\] pi in sheep a_\w+ exited \(signal SIGKILL\) before answering\./);
    assert.ok(events.some((e) => e.event === "prune" && e.agentId === dead.agentId && e.label === "fixer"));
    assert.equal(pruneText(await shepherd.prune()), "Nothing to prune: every recorded pane is alive.");
  });

  it("an answer on disk before pi ended is kept, not failed", async () => {
    const { world, shepherd, events, start } = setup();
    const a = await start("done");
    const p = await shepherd.prompt(a.agentId, "x");
    world.answer(a.agentId, p.promptId, "the answer");
    world.exitPi(a.agentId, { code: 0, signal: null });
    const out = await shepherd.prune();
    assert.deepEqual(out.exited, [{ agentId: a.agentId, label: "done", exit: "exit code 0" }]);
    assert.equal(events.find((e) => e.event === "result" && e.promptId === p.promptId)?.status, "completed");
  });

  it("a pi whose pid is gone before the multiplexer collected how it ended: prune asks again for a moment, then closes its pane", async () => {
    const { world, shepherd, start, clock } = setup();
    const late = await start("late");
    const never = await start("never");
    // Both pids are gone (status says exited); the multiplexer still calls both panes alive.
    world.mem(late.agentId).snapshot.piGone = true;
    world.mem(never.agentId).snapshot.piGone = true;
    assert.equal((await shepherd.status(late.agentId)).state, "exited");
    const run = shepherd.prune();
    // A moment later tmux has collected the first one's status; the second's it never does.
    await clock.advance(200);
    world.exitPi(late.agentId, { code: null, signal: "SIGKILL" });
    await clock.advance(3000);
    const out = await run;
    assert.deepEqual(out.removed.sort(), [late.agentId, never.agentId].sort());
    assert.deepEqual(out.exited.map((e) => [e.label, e.exit]).sort(), [
      ["late", "signal SIGKILL"],
      ["never", "how is unknown: its process is gone"],
    ]);
    assert.equal(world.panes.get(late.paneId)?.alive, false);
    assert.equal(world.panes.get(never.paneId)?.alive, false);
  });

  it("a dead pane that will not close stays recorded and is said so", async () => {
    const { world, shepherd, start, pruneOnTime } = setup();
    const a = await start("stuck");
    world.exitPi(a.agentId, { code: 1, signal: null });
    world.closeFails = true;
    const out = await pruneOnTime();
    assert.deepEqual([out.removed, out.exited], [[], []]);
    assert.equal(out.unclosed.length, 1);
    assert.ok(shepherd.registry.agents.has(a.agentId), "a pane of ours is never forgotten");
    assert.match(pruneText(out), /^Could not close the dead pane of stuck \(a_\w+\): .* It stays recorded; prune or close it again\.$/);
    world.closeFails = false;
    assert.deepEqual((await shepherd.prune()).removed, [a.agentId]);
  });
});
