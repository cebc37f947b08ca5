/**
 * The liveness monitor shares one multiplexer question among its callers, but only with callers
 * that asked before it went out (or within their maxAgeMs): a caller asking after a pane died
 * must not take the answer to a question asked while it lived. A warm sheep killed from outside
 * was handed out so: the start's "asked now" joined the pool's question already on its way.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LivenessMonitor } from "../../../src/core/herd/liveness.ts";
import type { PaneLiveness, PaneRef, Runtime } from "../../../src/ports/runtime.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";

/** A multiplexer whose answers the test lets out one by one, each the world as it was when asked. */
function heldRuntime() {
  let alive = true;
  const questions: { refs: readonly PaneRef[]; answer: () => void }[] = [];
  const runtime = {
    liveness(refs: readonly PaneRef[]) {
      const then: PaneLiveness = alive ? { state: "alive" } : { state: "exited", exit: { code: null, signal: "SIGKILL" } };
      return new Promise<Map<string, PaneLiveness>>((resolve) => {
        questions.push({ refs, answer: () => resolve(new Map(refs.map((r) => [r.agentId, then]))) });
      });
    },
  } as unknown as Runtime;
  return { runtime, questions, kill: () => (alive = false) };
}

const A: PaneRef = { agentId: "a_one", paneId: "%1" };

describe("LivenessMonitor", () => {
  it("a caller asking for a fresh answer after a pane died is not given the answer to the question asked before", async () => {
    const clock = new FakeClock();
    const world = heldRuntime();
    const live = new LivenessMonitor(world.runtime, clock, 1000);
    const before = live.get(A, 0);
    await settle();
    assert.equal(world.questions.length, 1);
    await clock.advance(5, 5);
    world.kill();
    const after = live.get(A, 0);
    await settle();
    world.questions[0]!.answer();
    assert.deepEqual(await before, { state: "alive" }, "the first caller gets the answer of its time");
    await settle();
    assert.equal(world.questions.length, 2, "the later caller asked again");
    world.questions[1]!.answer();
    assert.equal((await after)?.state, "exited");
  });

  it("callers that ask together share one question", async () => {
    const clock = new FakeClock();
    const world = heldRuntime();
    const live = new LivenessMonitor(world.runtime, clock, 1000);
    const B: PaneRef = { agentId: "a_two", paneId: "%2" };
    const one = live.get(A, 0);
    const two = live.get(A, 0);
    await settle();
    assert.equal(world.questions.length, 1);
    world.questions[0]!.answer();
    assert.deepEqual([await one, await two], [{ state: "alive" }, { state: "alive" }]);
    // Within its maxAgeMs a caller joins a question asked a moment before it.
    const first = live.get(B, 1000);
    await settle();
    await clock.advance(5, 5);
    const joined = live.get(B, 1000);
    await settle();
    assert.equal(world.questions.length, 2);
    world.questions[1]!.answer();
    assert.deepEqual([await first, await joined], [{ state: "alive" }, { state: "alive" }]);
    assert.equal(world.questions.length, 2, "one question for both");
  });

  it("fresh() never takes the answer to a question asked before it", async () => {
    const clock = new FakeClock();
    const world = heldRuntime();
    const live = new LivenessMonitor(world.runtime, clock, 1000);
    const before = live.get(A, 1000);
    await settle();
    await clock.advance(5, 5);
    world.kill();
    const fresh = live.fresh(A);
    await settle();
    world.questions[0]!.answer();
    await before;
    await settle();
    assert.equal(world.questions.length, 2);
    world.questions[1]!.answer();
    assert.equal((await fresh)?.state, "exited");
  });

  it("a machine that never answers delays no other machine's sheep: each machine is asked apart (issue 31, item 4)", async () => {
    const clock = new FakeClock();
    const stuck: PaneRef[][] = [];
    const runtime = {
      liveness(refs: readonly PaneRef[]) {
        // The remote host's sheep: its agent stopped, the question never answered.
        if (refs.some((r) => r.agentId === "a_far")) {
          stuck.push([...refs]);
          return new Promise<Map<string, PaneLiveness>>(() => undefined);
        }
        return Promise.resolve(new Map(refs.map((r) => [r.agentId, { state: "exited", exit: { code: null, signal: "SIGKILL" } } as PaneLiveness])));
      },
    } as unknown as Runtime;
    const FAR: PaneRef = { agentId: "a_far", paneId: "box/%1" };
    const live = new LivenessMonitor(runtime, clock, 1000, undefined, (id) => (id === "a_far" ? "box" : undefined));
    void live.get(FAR, 0);
    await settle();
    assert.equal(stuck.length, 1);
    assert.equal((await live.get(A, 0))?.state, "exited", "this machine's sheep is answered while the host's question hangs");
    assert.deepEqual(
      stuck[0]!.map((r) => r.agentId),
      ["a_far"],
      "the host's question named only its own sheep",
    );
  });

  it("a later question is asked beside one stuck in flight, never queued behind it", async () => {
    const clock = new FakeClock();
    const world = heldRuntime();
    const live = new LivenessMonitor(world.runtime, clock, 1000);
    void live.get(A, 0);
    await settle();
    await clock.advance(5, 5);
    const later = live.get(A, 0);
    await settle();
    assert.equal(world.questions.length, 2, "the later caller asked at once, the first question still unanswered");
    world.kill();
    world.questions[1]!.answer();
    assert.equal((await later)?.state, "alive");
  });
});
