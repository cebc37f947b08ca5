/**
 * Spend against budget where a person and a program see it (issue 35): the widget's line, status
 * and herd's line, the panel's JSON of a sheep, and /metrics, from one sheep of the memory world
 * that spent 700 of its 500 tokens.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { dayText, spendShort } from "../../../src/domain/budget.ts";
import { metricsText } from "../../../src/panel/metrics.ts";
import { DURATION_BUCKETS } from "../../../src/panel/feed.ts";
import { panelSheep } from "../../../src/panel/views.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { sheepLine } from "../../../src/texts/format.ts";
import { herdWidgetLines } from "../../../src/texts/widget.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryLedger } from "../../support/memory-ledger.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

async function spentSheep() {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s1", clock, ledger: new MemoryLedger(), budgets: { dailyTokens: 5000 } });
  const [budget] = await shepherd.spend.reserve([{ tokens: 500 }]);
  const a = await shepherd.start({ definition: def, cwd: "/work", label: "thrifty", budget: budget! });
  const p = await shepherd.prompt(a.agentId, "work");
  world.mem(a.agentId).outbox.set(p.promptId, {
    promptId: p.promptId,
    status: "failed",
    text: "",
    budgetExceeded: true,
    spent: { tokens: 700, outputTokens: 300, costUsd: 0.0123 },
  });
  await shepherd.wait([p.promptId], { timeoutSec: 0 });
  await shepherd.spend.flushed();
  return { shepherd, agentId: a.agentId, clock };
}

describe("spend against budget, seen", () => {
  it("the short and long texts", () => {
    assert.equal(spendShort({ tokens: 12_345, outputTokens: 10, costUsd: 0 }, { tokens: 50_000 }), "12k/50k tok");
    assert.equal(spendShort({ tokens: 14, outputTokens: 4, costUsd: 0 }, undefined), "", "a sheep held to no budget: its line stays as it was");
    assert.equal(spendShort({ tokens: 700, outputTokens: 300, costUsd: 0.0123 }, { outputTokens: 500, costUsd: 1 }), "300/500 out $0.0123/$1.00");
    assert.equal(spendShort(undefined, undefined), "");
    assert.equal(dayText({ tokens: 700, costUsd: 0 }, { dailyTokens: 5000 }), "Today's budget (spent or reserved by every shepherd): 700/5000 tokens.");
  });

  it("the widget, status's line, the panel's JSON and /metrics show it", async () => {
    const { shepherd, agentId, clock } = await spentSheep();
    const widget = herdWidgetLines(shepherd.views(), clock.now())!;
    assert.match(widget[1]!, /thrifty · worker · idle · 700\/500 tok \$0\.0123$/);
    const status = await shepherd.status(agentId as never);
    assert.match(sheepLine(status, clock.now()), / · spent 700\/500 tokens, 300 output, \$0\.0123/);
    const json = panelSheep(shepherd, shepherd.registry.agents.get(agentId)!, undefined, undefined);
    assert.deepEqual([json.spent, json.budget], [{ tokens: 700, outputTokens: 300, costUsd: 0.0123 }, { tokens: 500 }]);
    const day = await shepherd.spend.day();
    assert.deepEqual(day?.used, { tokens: 700, costUsd: 0.0123 });
    const counters = { durations: { buckets: DURATION_BUCKETS.map(() => 0), sum: 0, count: 0 }, tokens: { input: 0, output: 0 }, cost: 0, pushes: 0 };
    const text = metricsText(shepherd, counters, { requests: new Map(), errors: new Map(), clients: 0 }, day);
    for (const line of [
      'pi_shepherd_spent_tokens{kind="all"} 700',
      'pi_shepherd_spent_tokens{kind="output"} 300',
      "pi_shepherd_spent_cost_usd 0.0123",
      "pi_shepherd_budgeted_sheep 1",
      'pi_shepherd_day_tokens{kind="used"} 700',
      'pi_shepherd_day_tokens{kind="limit"} 5000',
    ]) {
      assert.ok(text.split("\n").includes(line), `/metrics has ${line}`);
    }
  });
});
