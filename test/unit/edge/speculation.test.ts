/**
 * Reading a streaming `shepherd` call (issue 36): which sheep it will start, from the arguments pi
 * has parsed so far, counting only values known to be whole.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { speculativeWants, StreamingCalls } from "../../../src/edge/speculation.ts";

const streaming = { complete: false, maxParallel: 4 };
const ended = { complete: true, maxParallel: 4 };

describe("speculativeWants", () => {
  it("a start names its agent once the value is whole: another key follows it, or the call ended", () => {
    assert.deepEqual(speculativeWants({ action: "start", agent: "wor" }, streaming), [], "a string still being written");
    assert.deepEqual(speculativeWants({ action: "start", agent: "worker", label: "" }, streaming), [{ name: "worker", count: 1 }]);
    assert.deepEqual(speculativeWants({ action: "start", agent: "worker" }, ended), [{ name: "worker", count: 1 }]);
    assert.deepEqual(speculativeWants({ action: "sta" }, streaming), [], "the action itself still being written");
    assert.deepEqual(speculativeWants({ agent: "worker", action: "start" }, streaming), [], "the action last, so not whole yet");
    assert.deepEqual(speculativeWants({ agent: "worker", action: "start", x: 1 }, streaming), [{ name: "worker", count: 1 }]);
  });

  it("carries a start's model, and nothing for actions that start no sheep", () => {
    assert.deepEqual(speculativeWants({ action: "start", agent: "worker", model: "fast", label: "x" }, streaming), [
      { name: "worker", count: 1, model: "fast" },
    ]);
    for (const action of ["prompt", "wait", "close", "status", "land"]) assert.deepEqual(speculativeWants({ action, agent: "worker", x: 1 }, ended), []);
    for (const junk of [null, "start", 3, [], { action: 5 }]) assert.deepEqual(speculativeWants(junk, ended), []);
  });

  it("a parallel delegation names one sheep per task of its first wave, counted by agent", () => {
    const tasks = [
      { agent: "scout", task: "a" },
      { agent: "worker", task: "b" },
      { agent: "scout", task: "c" },
      { agent: "scout", task: "d" },
      { agent: "worker", task: "e" },
    ];
    assert.deepEqual(speculativeWants({ action: "delegate", tasks }, ended), [
      { name: "scout", count: 3 },
      { name: "worker", count: 1 },
    ]);
    assert.deepEqual(speculativeWants({ action: "delegate", tasks }, { complete: true, maxParallel: 2 }), [
      { name: "scout", count: 1 },
      { name: "worker", count: 1 },
    ]);
    // Still streaming: the last task's agent counts once a key follows it in that task.
    assert.deepEqual(speculativeWants({ action: "delegate", tasks: [{ agent: "scout", task: "a" }, { agent: "work" }] }, streaming), [
      { name: "scout", count: 1 },
    ]);
    assert.deepEqual(
      speculativeWants(
        {
          action: "delegate",
          tasks: [
            { agent: "scout", task: "a" },
            { agent: "worker", task: "" },
          ],
        },
        streaming,
      ),
      [
        { name: "scout", count: 1 },
        { name: "worker", count: 1 },
      ],
    );
  });

  it("a chain names its first step only; a single delegation its agent", () => {
    assert.deepEqual(
      speculativeWants(
        {
          action: "delegate",
          chain: [
            { agent: "scout", task: "a" },
            { agent: "worker", task: "b" },
          ],
        },
        ended,
      ),
      [{ name: "scout", count: 1 }],
    );
    assert.deepEqual(speculativeWants({ action: "delegate", agent: "worker", task: "do it" }, streaming), [{ name: "worker", count: 1 }]);
  });

  it("names nothing the warm pool could not serve: another host or cwd, isolation, a resume, project agents", () => {
    const base = { action: "delegate", agent: "worker", task: "t" };
    for (const extra of [{ host: "" }, { cwd: "/x" }, { isolate: true }, { sandbox: true }, { agentScope: "project" }, { agentScope: "both" }]) {
      assert.deepEqual(speculativeWants({ ...base, ...extra }, ended), [], JSON.stringify(extra));
    }
    assert.deepEqual(speculativeWants({ action: "start", resume: "x", agent: "worker", y: 1 }, ended), []);
    assert.deepEqual(speculativeWants({ action: "delegate", tasks: [{ agent: "worker", task: "a", host: "gpu" }] }, ended), [], "a task on another host");
    assert.deepEqual(speculativeWants({ ...base, agentScope: "user" }, ended), [{ name: "worker", count: 1 }]);
    assert.deepEqual(speculativeWants({ action: "start", agent: "x".repeat(201), y: 1 }, ended), [], "no name longer than a definition's");
  });
});

describe("StreamingCalls", () => {
  const wants = (args: unknown) => (complete: false) => speculativeWants(args, { complete, maxParallel: 4 });

  it("asks the pool while the call is being written, once per change of what it names", () => {
    const calls = new StreamingCalls();
    assert.equal(calls.next("c1", '{"action":"start","ag', wants({ action: "start", ag: "" })), undefined, "no agent yet");
    assert.deepEqual(calls.next("c1", 'ent":"worker","lab', wants({ action: "start", agent: "worker", lab: "" })), [{ name: "worker", count: 1 }]);
    assert.equal(calls.next("c1", 'el":"w', wants({ action: "start", agent: "worker", label: "w" })), undefined, "the same again");
  });

  it("boots nothing for a call whose arguments are whole: it runs at once and starts its own", () => {
    const calls = new StreamingCalls();
    const text = JSON.stringify({ action: "start", agent: "worker", label: "w" });
    assert.equal(calls.next("c2", text, wants(JSON.parse(text))), undefined, "arrived in one piece");
    const streamed = new StreamingCalls();
    assert.ok(streamed.next("c3", text.slice(0, 35), wants({ action: "start", agent: "worker", label: "" })));
    assert.equal(streamed.next("c3", text.slice(35), wants(JSON.parse(text))), undefined, "its last piece makes it whole");
  });

  it("is bounded: a call past 64 KiB, and the oldest of more than 32 calls, are let go", () => {
    const calls = new StreamingCalls();
    const big = `{"action":"start","agent":"worker","x":"${"a".repeat(70_000)}`;
    assert.equal(calls.next("big", big, wants({ action: "start", agent: "worker", x: "" })), undefined);
    for (let i = 0; i < 40; i++) calls.next(`c${i}`, '{"action":"start","agent":"w","l', wants({ action: "start", agent: "w", l: "" }));
    assert.deepEqual(calls.next("c0", "x", wants({ action: "start", agent: "w", l: "x" })), [{ name: "w", count: 1 }], "c0 was let go, so it asks again");
    calls.ended("c39");
    assert.deepEqual(calls.next("c39", '{"action":"start","agent":"w","l', wants({ action: "start", agent: "w", l: "" })), [{ name: "w", count: 1 }]);
  });
});
