import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { parseAgentId, type PromptId, parsePromptId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup(owner = "shepherd-1") {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner, clock, livenessIntervalMs: 1000, startTimeoutMs: 10_000 });
  return { world, clock, shepherd };
}

async function started(s: ReturnType<typeof setup>, label?: string) {
  return s.shepherd.start({ definition: def, cwd: "/work", ...(label ? { label } : {}) });
}

describe("core: handles", () => {
  it("gives opaque prefixed ids and refuses ids of the wrong kind", async () => {
    const s = setup();
    const a = await started(s);
    assert.match(a.agentId, /^a_[0-9a-z]{10}$/);
    const p = await s.shepherd.prompt(a.agentId, "hi");
    assert.match(p.promptId, /^p_[0-9a-z]{10}$/);
    await assert.rejects(s.shepherd.status(parseAgentId(p.promptId)), /^ShepherdError: \[unknown_agent\] .*is a promptId/);
    await assert.rejects(s.shepherd.status(parseAgentId("a_nothere000")), /^ShepherdError: \[unknown_agent\] no sheep/);
    // An empty id is refused where it is parsed, before any core call.
    assert.throws(() => parseAgentId(""), /^ShepherdError: \[invalid_params\]/);
    const [wrongKind, unknown] = await s.shepherd.wait([parsePromptId(a.agentId), parsePromptId("p_zzzzzzzzzz")], { timeoutSec: 0 });
    assert.equal(wrongKind!.status, "failed");
    assert.match(wrongKind!.error!, /^\[unknown_prompt\] .*is an agentId/);
    assert.match(unknown!.error!, /^\[unknown_prompt\] no prompt/);
  });

  it("gives the pane its program as it creates it, and labels sheep uniquely", async () => {
    const s = setup();
    const a = await started(s);
    const b = await started(s);
    assert.deepEqual(
      s.world.calls.filter((c) => c.startsWith("create") || c.startsWith("run")),
      ["create %1 tab", "run %1", "create %2 tab", "run %2"],
    );
    assert.equal(a.label, "worker");
    assert.equal(b.label, "worker-2");
    await assert.rejects(started(s, "worker"), /^ShepherdError: \[invalid_params\] label "worker" is already used/);
  });
});

describe("core: prompts", () => {
  it("allows one unresolved prompt per sheep and a new one after it settles", async () => {
    const s = setup();
    const a = await started(s);
    const p1 = await s.shepherd.prompt(a.agentId, "one");
    await assert.rejects(s.shepherd.prompt(a.agentId, "two"), /^ShepherdError: \[prompt_pending\]/);
    s.world.answer(a.agentId, p1.promptId, "first answer");
    const p2 = await s.shepherd.prompt(a.agentId, "two");
    assert.equal(s.world.mem(a.agentId).inbox.get(p2.promptId), "two");
  });

  it("settles exactly once: a later result cannot replace a cancellation", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    await s.shepherd.close(a.agentId);
    s.world.answer(a.agentId, p.promptId, "too late");
    const [r1] = await s.shepherd.wait([p.promptId], { timeoutSec: 0 });
    const [r2] = await s.shepherd.wait([p.promptId], { timeoutSec: 0 });
    assert.equal(r1!.status, "cancelled");
    assert.deepEqual(r2, r1);
  });

  it("refuses empty and oversized messages", async () => {
    const s = setup();
    const a = await started(s);
    await assert.rejects(s.shepherd.prompt(a.agentId, ""), /^ShepherdError: \[invalid_params\]/);
    await assert.rejects(s.shepherd.prompt(a.agentId, "x".repeat(4 * 1024 * 1024 + 1)), /^ShepherdError: \[invalid_params\] message is \d+ bytes; the limit/);
  });
});

describe("core: wait", () => {
  it("waits for many concurrently, returns input order, and one failure hides nothing", async () => {
    const s = setup();
    const a = await started(s);
    const b = await started(s);
    const c = await started(s);
    const pa = await s.shepherd.prompt(a.agentId, "a");
    const pb = await s.shepherd.prompt(b.agentId, "b");
    const pc = await s.shepherd.prompt(c.agentId, "c");
    const waiting = s.shepherd.wait([pa.promptId, pb.promptId, parsePromptId("p_missing000"), pc.promptId], { timeoutSec: 60 });
    await settle();
    s.world.answer(c.agentId, pc.promptId, "C");
    s.world.answer(b.agentId, pb.promptId, "", "failed", "500 boom");
    await s.clock.advance(200);
    s.world.answer(a.agentId, pa.promptId, "A\n  exact  ");
    const results = await waiting;
    assert.deepEqual(
      results.map((r) => r.promptId),
      [pa.promptId, pb.promptId, "p_missing000", pc.promptId],
    );
    assert.deepEqual(
      results.map((r) => r.status),
      ["completed", "failed", "failed", "completed"],
    );
    assert.equal(results[0]!.text, "A\n  exact  ");
    assert.equal(results[1]!.error, "[provider_error] 500 boom");
    assert.equal(results[3]!.text, "C");
  });

  it("times out without settling, and a later wait gets the answer", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "slow");
    const first = s.shepherd.wait([p.promptId], { timeoutSec: 2 });
    await s.clock.advance(2500);
    const [t] = await first;
    assert.equal(t!.status, "timeout");
    assert.equal((await s.shepherd.status(a.agentId)).state, "working");
    const second = s.shepherd.wait([p.promptId], { timeoutSec: 60 });
    await settle();
    s.world.answer(a.agentId, p.promptId, "done at last");
    const [r] = await second;
    assert.equal(r!.status, "completed");
    assert.equal(r!.text, "done at last");
    assert.equal((await s.shepherd.status(a.agentId)).state, "idle");
  });

  it("fails fast when the pane dies instead of waiting out the deadline", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 1200 });
    await settle();
    s.world.killPane(a.agentId);
    await s.clock.advance(2100);
    const [r] = await waiting;
    assert.equal(r!.status, "failed");
    assert.match(r!.error!, /^\[pane_gone\]/);
    assert.equal((await s.shepherd.status(a.agentId)).state, "exited");
    await assert.rejects(s.shepherd.prompt(a.agentId, "again"), /^ShepherdError: \[agent_closed\] .*has exited/);
  });

  it("fails fast when pi exits while the pane lives on", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 1200 });
    await settle();
    s.world.mem(a.agentId).snapshot.exited = { code: 137, signal: null, at: "now" };
    s.world.ring(a.agentId);
    const [r] = await waiting;
    assert.match(r!.error!, /^\[pi_exited\] .*code 137/);
  });

  it("fails within about a second when the multiplexer says pi ended in its kept pane, naming the signal", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 1200 });
    await settle();
    s.world.exitPi(a.agentId, { code: null, signal: "SIGKILL" });
    await s.clock.advance(1100);
    const [r] = await waiting;
    assert.equal(r!.status, "failed");
    assert.match(r!.error!, /^\[pi_exited\] pi in sheep a_\w+ exited \(signal SIGKILL\) before answering\.$/);
    const st = await s.shepherd.status(a.agentId);
    assert.deepEqual([st.state, st.paneAlive], ["exited", false], "the pane is kept, but nothing lives in it");
    await assert.rejects(s.shepherd.prompt(a.agentId, "again"), /^ShepherdError: \[agent_closed\] .*has exited/);
    const closed = await s.shepherd.close(a.agentId);
    assert.equal(closed.alreadyClosed, false);
    assert.ok(s.world.calls.includes(`close ${s.world.mem(a.agentId).paneId}`), "the kept pane is closed like any other");
  });

  it("a multiplexer that stopped answering does not hold the wait of a sheep whose pi is gone: the pid witness fails it", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 1200 });
    await settle();
    s.world.livenessHangs = true;
    s.world.killPane(a.agentId);
    // The file host's pid witness: pi's pid gone for longer than its grace.
    s.world.mem(a.agentId).snapshot.exited = { code: null, signal: null, at: new Date().toISOString(), inferred: true };
    s.world.mem(a.agentId).snapshot.piGone = true;
    let done = false;
    void waiting.then(() => (done = true));
    for (let i = 0; i < 10 && !done; i++) await s.clock.advance(1000);
    assert.equal(done, true, "the wait still hangs on the multiplexer 10 s after pi went");
    const [r] = await waiting;
    assert.equal(r!.status, "failed");
    assert.match(r!.error!, /^\[pi_exited\] /);
  });

  it("a pi that quit normally reports exit code 0; an answer written before it quit still wins", async () => {
    const s = setup();
    const a = await started(s);
    const p1 = await s.shepherd.prompt(a.agentId, "one");
    s.world.answer(a.agentId, p1.promptId, "said before quitting");
    s.world.exitPi(a.agentId, { code: 0, signal: null });
    const [r1] = await s.shepherd.wait([p1.promptId], { timeoutSec: 5 });
    assert.deepEqual([r1!.status, r1!.text], ["completed", "said before quitting"]);
    const b = await started(s);
    const p2 = await s.shepherd.prompt(b.agentId, "two");
    s.world.exitPi(b.agentId, { code: 0, signal: null });
    const waiting = s.shepherd.wait([p2.promptId], { timeoutSec: 5 });
    await settle();
    await s.clock.advance(1100);
    const [r2] = await waiting;
    assert.match(r2!.error!, /^\[pi_exited\] .*\(exit code 0\)/);
  });

  it("refuses a prompt to a sheep whose pi is not running, before any multiplexer says so", async () => {
    const s = setup();
    const a = await started(s);
    s.world.mem(a.agentId).snapshot.piGone = true;
    await assert.rejects(s.shepherd.prompt(a.agentId, "anyone?"), /^ShepherdError: \[agent_closed\] .*has exited/);
  });

  it("names how pi ended as the multiplexer saw it, not the pid witness's guess, however late it is asked", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    s.world.exitPi(a.agentId, { code: 0, signal: null });
    await s.clock.advance(5000);
    // Long after: the file host has taken the pid's absence for an exit of unknown kind.
    s.world.mem(a.agentId).snapshot.exited = { code: null, signal: null, at: new Date().toISOString(), inferred: true };
    s.world.mem(a.agentId).snapshot.piGone = true;
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.match(r!.error!, /^\[pi_exited\] .*exited \(exit code 0\) before answering\.$/);
    assert.equal((await s.shepherd.status(a.agentId)).runtimeStatus, "pi exited (exit code 0)");
  });

  it("reports blocked with its label and keeps the prompt pending", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    s.world.mem(a.agentId).snapshot.blocked = "Allow rm -rf?";
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.status, "blocked");
    assert.equal(r!.error, "Allow rm -rf?");
    delete s.world.mem(a.agentId).snapshot.blocked;
    s.world.answer(a.agentId, p.promptId, "ok");
    const [r2] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r2!.text, "ok");
  });

  it("ends promptly on abort and leaves the prompt pending", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const ac = new AbortController();
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 1200, signal: ac.signal });
    await settle();
    ac.abort();
    await assert.rejects(waiting, /^ShepherdError: \[aborted\]/);
    s.world.answer(a.agentId, p.promptId, "still delivered");
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 1 });
    assert.equal(r!.text, "still delivered");
  });

  it("asks the multiplexer about liveness about once a second, not per waiter", async () => {
    const s = setup();
    const ids: PromptId[] = [];
    for (let i = 0; i < 4; i++) {
      const a = await started(s);
      ids.push((await s.shepherd.prompt(a.agentId, "x")).promptId);
    }
    const before = s.world.calls.filter((c) => c.startsWith("liveness")).length;
    const waiting = s.shepherd.wait(ids, { timeoutSec: 10 });
    await s.clock.advance(10_500);
    const results = await waiting;
    assert.ok(results.every((r) => r.status === "timeout"));
    const calls = s.world.calls.filter((c) => c.startsWith("liveness")).length - before;
    assert.ok(calls <= 14, `expected about 11 liveness calls for 4 waiters over 10 s, got ${calls}`);
  });

  it("never closes a sheep after a wait", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    s.world.answer(a.agentId, p.promptId, "y");
    await s.shepherd.wait([p.promptId]);
    assert.equal(s.world.calls.filter((c) => c.startsWith("close")).length, 0);
    assert.equal((await s.shepherd.status(a.agentId)).state, "idle");
  });
});

describe("core: close and start failures", () => {
  it("close removes a sheep's files only once its pi, which outlives its pane for a moment, is gone too", async () => {
    const s = setup();
    const a = await started(s);
    s.world.lingering.set(a.agentId, 3);
    const closing = s.shepherd.close(a.agentId);
    await settle();
    assert.equal(s.world.mem(a.agentId).cleaned, false, "pi still runs: its files stay");
    for (let i = 0; i < 10 && !s.world.mem(a.agentId).cleaned; i++) await s.clock.advance(20, 20);
    await closing;
    assert.equal(s.world.mem(a.agentId).cleaned, true);
    assert.equal(s.world.lingering.get(a.agentId), 0, "every look was taken before the files went");
  });

  it("close cancels the pending prompt, is idempotent, and cleans up after the pane is gone", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 100 });
    await settle();
    const closed = await s.shepherd.close(a.agentId);
    assert.deepEqual(closed, {
      agentId: a.agentId,
      cancelledPromptIds: [p.promptId],
      alreadyClosed: false,
      sessionPath: `/sessions/${a.agentId}.jsonl`,
    });
    const [r] = await waiting;
    assert.equal(r!.status, "cancelled");
    assert.equal(s.world.mem(a.agentId).cleaned, true);
    assert.deepEqual(await s.shepherd.close(a.agentId), { agentId: a.agentId, cancelledPromptIds: [], alreadyClosed: true });
    assert.equal((await s.shepherd.status(a.agentId)).state, "closed");
    await assert.rejects(s.shepherd.prompt(a.agentId, "more"), /^ShepherdError: \[agent_closed\]/);
  });

  it("a wait that looks while a close is under way sees the cancellation, not the pane it closed", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    const waiting = s.shepherd.wait([p.promptId], { timeoutSec: 100 });
    await settle();
    // pi outlives its pane for a while: the close waits for it, and meanwhile the wait looks again.
    s.world.lingering.set(a.agentId, 60);
    const closing = s.shepherd.close(a.agentId);
    await settle();
    for (let i = 0; i < 20 && s.world.lingering.get(a.agentId)! > 0; i++) await s.clock.advance(100, 20);
    const closed = await closing;
    assert.deepEqual(closed.cancelledPromptIds, [p.promptId]);
    const [r] = await waiting;
    assert.equal(r!.status, "cancelled");
    assert.match(r!.error!, /^\[cancelled\] the sheep was closed/);
  });

  it("a sheep whose pane id came back with another sheep closes without touching that pane", async () => {
    const s = setup();
    const a = await started(s);
    s.world.killPane(a.agentId);
    assert.equal((await s.shepherd.status(a.agentId)).state, "exited");
    // Every pane gone: the next server numbers from %1 again, and b gets a's old pane id.
    const b = await started(s);
    assert.equal(b.paneId, a.paneId);
    const closed = await s.shepherd.close(a.agentId);
    assert.deepEqual(closed, { agentId: a.agentId, cancelledPromptIds: [], alreadyClosed: false });
    assert.equal((await s.shepherd.status(b.agentId)).paneAlive, true, "b's pane was left alone");
  });

  it("a result already written is kept rather than cancelled on close", async () => {
    const s = setup();
    const a = await started(s);
    const p = await s.shepherd.prompt(a.agentId, "x");
    s.world.answer(a.agentId, p.promptId, "answered before close");
    const closed = await s.shepherd.close(a.agentId);
    assert.deepEqual(closed.cancelledPromptIds, []);
    const [r] = await s.shepherd.wait([p.promptId]);
    assert.equal(r!.text, "answered before close");
  });

  it("refuses to close a sheep another shepherd owns", async () => {
    const s = setup();
    const a = await started(s);
    s.shepherd.registry.agents.get(a.agentId)!.owner = "someone-else";
    await assert.rejects(s.shepherd.close(a.agentId), /^ShepherdError: \[not_owned\]/);
    assert.equal(s.world.calls.filter((c) => c.startsWith("close")).length, 0);
  });

  it("a sheep whose pi exits at start fails with the pane's last lines and closes only its pane", async () => {
    const s = setup();
    s.world.panes.set("%99", { agentId: "user", alive: true, text: "", owner: "user" });
    s.world.onLaunch = "exit";
    await assert.rejects(started(s), (e: Error) => {
      assert.match(e.message, /^\[start_failed\] sheep "worker" \(worker\) did not start: pi exited/);
      assert.match(e.message, /Error: no model/);
      return true;
    });
    assert.deepEqual(
      s.world.calls.filter((c) => c.startsWith("close")),
      ["close %1"],
    );
    assert.equal(s.world.panes.get("%99")!.alive, true);
    assert.equal(s.shepherd.registry.agents.size, 0);
  });

  it("a failed start whose pane cannot be closed keeps its record: the pane is never lost", async () => {
    const s = setup();
    s.world.onLaunch = "never";
    s.world.closeFails = true;
    const starting = assert.rejects(started(s), (e: Error) => {
      assert.match(e.message, /^\[start_failed\] .*not ready after 10 s/);
      assert.match(e.message, /could not be closed/);
      return true;
    });
    await s.clock.advance(14_000);
    await starting;
    const [rec] = [...s.shepherd.registry.agents.values()];
    assert.ok(rec, "the sheep is still recorded");
    assert.equal(s.world.panes.get(rec.paneId)!.alive, true);
    assert.equal([...s.world.sheep.values()][0]!.cleaned, false, "its files stay while its pi may still run");
    // Once the multiplexer answers again, the record is how the pane is found and closed.
    s.world.closeFails = false;
    await s.shepherd.close(rec.agentId);
    assert.equal(s.world.panes.get(rec.paneId)!.alive, false);
    assert.equal([...s.world.sheep.values()][0]!.cleaned, true);
  });

  it("a sheep that never becomes ready times out and is cleaned up", async () => {
    const s = setup();
    s.world.onLaunch = "never";
    const starting = assert.rejects(started(s), /^ShepherdError: \[start_failed\] .*not ready after 10 s/);
    await s.clock.advance(11_000);
    await starting;
    assert.equal(s.world.panes.get("%1")!.alive, false);
    assert.equal([...s.world.sheep.values()][0]!.cleaned, true);
  });
});
