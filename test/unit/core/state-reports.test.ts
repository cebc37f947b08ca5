/**
 * A sandboxed sheep cannot tell its multiplexer its state (issue 33): the shepherd tells it on the
 * sheep's behalf through the runtime's reportState, once per change of state, each call bounded,
 * one sheep's slow call holding no other's, a failure told once. A sheep that is not sandboxed
 * tells it itself and is never told here.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { REPORT_DEADLINE_MS, StateReports } from "../../../src/core/herd/state-reports.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { ReportedState, Runtime } from "../../../src/ports/runtime.ts";
import type { SheepFiles } from "../../../src/ports/sheep-files.ts";
import type { AgentDefinition, AgentRecord, AgentState } from "../../../src/ports/types.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };

/** A shepherd on the in-memory world whose sheep run sandboxed where asked, and whose multiplexer records each report. */
function setup() {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const reports: string[] = [];
  const runtime: Runtime = {
    ...world.runtime,
    reportState: async (paneId, state) => {
      reports.push(`${paneId} ${state}`);
    },
  };
  const files: SheepFiles = {
    ...world.files,
    prepare: async (req) => ({ ...(await world.files.prepare(req)), ...(req.sandbox ? { sandboxed: true as const } : {}) }),
  };
  const shepherd = new Shepherd({ runtime, files, owner: "s", clock, livenessIntervalMs: 1000 });
  return { world, clock, shepherd, reports };
}

function record(agentId: string, paneId: string, sandboxed = true): AgentRecord {
  return {
    agentId,
    agent: "echo",
    label: `sheep ${agentId}`,
    runtime: "herdr",
    paneId,
    cwd: "/",
    sessionPath: "/s.jsonl",
    createdAt: "2026-01-01T00:00:00Z",
    owner: "s",
    state: "starting",
    ...(sandboxed ? { sandboxed: true as const } : {}),
  } as AgentRecord;
}

function change(reports: StateReports, rec: AgentRecord, state: AgentState): void {
  rec.state = state;
  reports.changed(rec);
}

describe("a sandboxed sheep's state, told to its multiplexer by the shepherd", () => {
  it("idle when ready, working on a prompt, idle on its answer, blocked on its question: once each, none for a look that changes nothing", async () => {
    const { world, clock, shepherd, reports } = setup();
    const boxed = await shepherd.start({ definition: def, cwd: "/", label: "boxed", sandbox: true });
    const open = await shepherd.start({ definition: def, cwd: "/", label: "open" });
    await settle();
    const pane = shepherd.registry.agents.get(boxed.agentId)!.paneId;
    assert.deepEqual(reports, [`${pane} idle`], "only the sandboxed sheep: the other tells its multiplexer itself");

    const p = await shepherd.prompt(boxed.agentId, "count the sheep");
    await shepherd.prompt(open.agentId, "count the goats");
    await settle();
    assert.deepEqual(reports.slice(1), [`${pane} working`]);
    world.answer(boxed.agentId, p.promptId, "40 sheep");
    assert.equal((await shepherd.wait([p.promptId], { timeoutSec: 60 }))[0]!.status, "completed");
    await settle();
    assert.deepEqual(reports.slice(2), [`${pane} idle`]);

    // Looks that find the same state say nothing more.
    await shepherd.refreshFromFiles();
    await shepherd.status(boxed.agentId);
    await clock.advance(3000, 1000);
    await shepherd.refreshFromFiles();
    await settle();
    assert.equal(reports.length, 3, reports.join("\n"));

    await shepherd.prompt(boxed.agentId, "ask me");
    world.say(boxed.agentId, { messageId: "m_bbbbbbbbbb", kind: "question", text: "north or south?", awaitReply: true, timeoutSec: 600 });
    await shepherd.refreshFromFiles(new Set([boxed.agentId]));
    await settle();
    assert.deepEqual(reports.slice(3), [`${pane} working`, `${pane} blocked`]);
    world.stopAsking(boxed.agentId);
    await shepherd.refreshFromFiles(new Set([boxed.agentId]));
    await settle();
    assert.deepEqual(reports.slice(5), [`${pane} working`]);

    await shepherd.close(boxed.agentId);
    await shepherd.close(open.agentId);
    await settle();
    assert.deepEqual(reports.slice(6), [], "an ended sheep is the multiplexer's to see: nothing is told of it");
  });

  it("a call that hangs holds only its own sheep, until its deadline; changes meanwhile collapse into the latest", async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const hung = new Set<string>(["%1"]);
    const runtime: Pick<Runtime, "reportState"> = {
      reportState: (paneId: string, state: ReportedState) => {
        calls.push(`${paneId} ${state}`);
        return hung.has(paneId) ? new Promise<void>(() => undefined) : Promise.resolve();
      },
    };
    const warnings: string[] = [];
    const reports = new StateReports(runtime, clock, (m) => warnings.push(m));
    const a = record("a_aaaaaaaaaa", "%1");
    const b = record("a_bbbbbbbbbb", "%2");
    change(reports, a, "idle");
    change(reports, a, "working");
    change(reports, a, "blocked");
    change(reports, b, "idle");
    await settle();
    assert.deepEqual(calls, ["%1 idle", "%2 idle"], "the other sheep is told at once");
    change(reports, b, "working");
    await settle();
    assert.deepEqual(calls.slice(2), ["%2 working"]);
    assert.deepEqual(warnings, []);

    hung.delete("%1");
    await clock.advance(REPORT_DEADLINE_MS, 500);
    await reports.settled();
    assert.deepEqual(calls.slice(3), ["%1 blocked"], "after the deadline, only the latest state of the slow sheep");
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /sandboxed sheep sheep a_aaaaaaaaaa \(a_aaaaaaaaaa\) as idle in the multiplexer: no answer within 5 s/);
  });

  it("a failure is told once, never thrown; a repeat of the state told is no call; a runtime without reportState is never asked", async () => {
    const clock = new FakeClock();
    let calls = 0;
    const failing: Pick<Runtime, "reportState"> = {
      reportState: async () => {
        calls++;
        throw new Error("[runtime_unavailable] herdr is not running");
      },
    };
    const warnings: string[] = [];
    const reports = new StateReports(failing, clock, (m) => warnings.push(m));
    const a = record("a_aaaaaaaaaa", "%1");
    const b = record("a_bbbbbbbbbb", "%2");
    assert.doesNotThrow(() => {
      change(reports, a, "idle");
      change(reports, b, "working");
    });
    await reports.settled();
    change(reports, a, "idle");
    change(reports, a, "starting");
    await reports.settled();
    assert.equal(calls, 2);
    change(reports, a, "working");
    await reports.settled();
    assert.equal(calls, 3);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(warnings[0]!, /herdr is not running.*Told once/);

    const unsandboxed = record("a_cccccccccc", "%3", false);
    change(reports, unsandboxed, "working");
    await reports.settled();
    assert.equal(calls, 3);

    const silent = new StateReports({}, clock);
    assert.doesNotThrow(() => change(silent, record("a_dddddddddd", "%4"), "working"));
  });
});
