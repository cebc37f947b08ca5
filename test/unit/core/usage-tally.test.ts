/**
 * The herd's totals count each settled prompt once and never shrink: not when a sheep closes, not
 * when the records let go of its prompts; today is the prompt's local day of finish.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { localDay, UsageTally } from "../../../src/core/herd/usage-tally.ts";
import type { PromptRecord } from "../../../src/ports/types.ts";
import { parseAgentId, parsePromptId } from "../../../src/domain/ids.ts";

const NOW = Date.parse("2026-12-07T12:00:00Z");

function settled(n: number, usage: object, finishedAt?: string): PromptRecord {
  const promptId = parsePromptId(`p_${String(n).padStart(10, "0")}`);
  return {
    promptId,
    agentId: parseAgentId("a_0000000001"),
    submittedAt: new Date(NOW - 1000).toISOString(),
    ...(finishedAt ? { finishedAt } : {}),
    settled: { promptId, agentId: "a_0000000001", status: "completed", usage },
  } as PromptRecord;
}

describe("UsageTally", () => {
  it("counts a prompt once however often it is seen, and keeps it after the records forget it", () => {
    const t = new UsageTally();
    const a = settled(1, { input: 100, output: 20, cost: 0.5 });
    const b = settled(2, { input: 1, output: 2 });
    t.see([a, b], NOW);
    t.see([a, b], NOW);
    assert.deepEqual({ ...t.totals(NOW), today: undefined }, { input: 101, output: 22, cost: 0.5, prompts: 2, today: undefined });
    t.see([], NOW);
    assert.equal(t.totals(NOW).input, 101, "the records let go of both: the total stays");
    t.see([settled(3, { input: 5, output: 5, cost: 1 })], NOW);
    assert.equal(t.totals(NOW).input, 106);
    assert.equal(t.totals(NOW).cost, 1.5);
  });

  it("today is the local day of the finish; a prompt finished yesterday counts in all, not today", () => {
    const t = new UsageTally();
    t.see([settled(1, { input: 10, output: 1 }, new Date(NOW - 2 * 24 * 3600 * 1000).toISOString()), settled(2, { input: 7, output: 3 })], NOW);
    const totals = t.totals(NOW);
    assert.equal(totals.input, 17);
    assert.deepEqual(totals.today, { day: localDay(NOW), input: 7, output: 3, cost: 0, prompts: 1 });
    assert.equal(t.totals(NOW + 24 * 3600 * 1000).today.input, 0, "the next day starts at nothing");
  });

  it("usage that is no count (text, negative, NaN) adds nothing and never turns a sum to text", () => {
    const t = new UsageTally();
    t.see([settled(1, { input: "100", output: -5, cost: Number.NaN }), settled(2, { input: 3 })], NOW);
    assert.deepEqual({ ...t.totals(NOW), today: undefined }, { input: 3, output: 0, cost: 0, prompts: 2, today: undefined });
  });
});
