/**
 * Budgets in the core (issue 35), on the in-memory world, a fake clock and an in-memory day ledger
 * shared by two shepherds: reservations before a start, the budget told to the sheep, its spend
 * kept from its results, the [budget_exceeded] settlement, the events, and the day's limit.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Delegation } from "../../../src/core/delegation/delegate.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { parseAgentId, parsePromptId } from "../../../src/domain/ids.ts";
import type { DailyBudgets } from "../../../src/domain/budget.ts";
import type { AuditEvent } from "../../../src/ports/audit.ts";
import type { SheepResult } from "../../../src/ports/sheep-files.ts";
import type { SpendLedger } from "../../../src/ports/spend-ledger.ts";
import type { AgentDefinition, StartedAgent } from "../../../src/ports/types.ts";
import { FileSpendLedger } from "../../../src/stores/spend-ledger.ts";
import { agentProblem } from "../../../src/stores/state-records.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryLedger } from "../../support/memory-ledger.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };
const DAY = "2026-01-01";

function setup(budgets: DailyBudgets | undefined, ledger: SpendLedger = new MemoryLedger(), owner = "shepherd-1") {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const events: AuditEvent[] = [];
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner,
    clock,
    startTimeoutMs: 10_000,
    ledger,
    ...(budgets ? { budgets } : {}),
    audit: { record: (e) => void events.push(e) },
  });
  return { world, clock, shepherd, ledger, events };
}

type World = ReturnType<typeof setup>;

async function startWith(s: World, own?: { tokens?: number; outputTokens?: number; costUsd?: number }): Promise<StartedAgent> {
  const [budget] = await s.shepherd.spend.reserve([own]);
  return s.shepherd.start({ definition: def, cwd: "/work", budget: budget! });
}

function result(s: World, agentId: string, promptId: string, r: Partial<SheepResult>) {
  s.world.mem(agentId).outbox.set(promptId, { promptId, status: "completed", text: "done", stopReason: "stop", ...r });
  s.world.ring(agentId);
}

describe("budgets in the core", () => {
  it("a sheep's budget goes to the sheep with every prompt; its results' spend is kept, warned once at the line, and a stopped turn settles [budget_exceeded] with the numbers", async () => {
    const s = setup({ warnAt: 0.5 });
    const a = await startWith(s, { tokens: 1000 });
    const p1 = await s.shepherd.prompt(a.agentId, "work");
    const sent = s.world.mem(a.agentId).deliveries.at(-1)!;
    assert.deepEqual(sent.kind === "prompt" ? sent.budget : undefined, { tokens: 1000 });
    result(s, a.agentId, p1.promptId, { spent: { tokens: 600, outputTokens: 50, costUsd: 0 } });
    const [r1] = await s.shepherd.wait([p1.promptId], { timeoutSec: 0 });
    assert.equal(r1!.status, "completed");
    assert.deepEqual(r1!.spent, { tokens: 600, outputTokens: 50, costUsd: 0 });
    assert.equal(s.events.filter((e) => e.event === "budget-warning" && e.scope === "sheep").length, 1, "the warning line at 500 of 1000");

    const p2 = await s.shepherd.prompt(a.agentId, "more");
    result(s, a.agentId, p2.promptId, {
      status: "failed",
      text: "partial answer",
      budgetExceeded: true,
      errorMessage: "the sheep's budget is spent (1100 tokens spent of a budget of 1000); its turn was stopped",
      spent: { tokens: 1100, outputTokens: 90, costUsd: 0 },
    });
    const [r2] = await s.shepherd.wait([p2.promptId], { timeoutSec: 0 });
    assert.equal(r2!.status, "failed");
    assert.equal(r2!.text, "partial answer", "the answer text there was");
    assert.match(
      r2!.error!,
      /^\[budget_exceeded\] the sheep's budget is spent \(1100 tokens spent of a budget of 1000\).*Spent: 1100\/1000 tokens, 90 output, \$0\.0000\./,
    );
    assert.equal(s.events.filter((e) => e.event === "budget-warning").length, 1, "warned once");
    const exceeded = s.events.find((e) => e.event === "budget-exceeded");
    assert.deepEqual([exceeded?.scope, exceeded?.agentId, exceeded?.spent], ["sheep", a.agentId, { tokens: 1100, outputTokens: 90, costUsd: 0 }]);
    // Seen in status, and nothing more reaches a sheep whose budget is spent.
    const st = await s.shepherd.status(a.agentId);
    assert.deepEqual([st.spent?.tokens, st.budget?.tokens], [1100, 1000]);
    await assert.rejects(
      s.shepherd.prompt(a.agentId, "again"),
      /^ShepherdError: \[budget_exceeded\] sheep .* has spent its budget \(1100 tokens spent of a budget of 1000\)/,
    );
    // The record with its spend passes the state file's checks (a reload keeps it).
    assert.equal(agentProblem(structuredClone(s.shepherd.registry.agents.get(a.agentId))), undefined);
  });

  it("a start whose reservation does not fit what is left of the day is refused before any pane, across two shepherds; a closed sheep gives back what it did not spend", async () => {
    const ledger = new MemoryLedger();
    const one = setup({ dailyTokens: 10_000 }, ledger, "shepherd-1");
    const two = setup({ dailyTokens: 10_000 }, ledger, "shepherd-2");
    const a = await startWith(one, { tokens: 6000 });
    // Without a budget of its own a sheep reserves a tenth of the day's limit, and is held to it.
    const b = await startWith(two);
    assert.deepEqual(two.shepherd.registry.agents.get(b.agentId)!.budget, { tokens: 1000 });
    assert.deepEqual(await ledger.totals(DAY), { tokens: 7000, costUsd: 0 });
    const panes = two.world.calls.filter((c) => c.startsWith("create")).length;
    await assert.rejects(startWith(two, { tokens: 3500 }), (e: Error) => {
      assert.match(
        e.message,
        /^\[budget_exceeded\] the herd's daily budget does not hold this: this start reserves 3500 tokens, but 3000 of the day's 10000 are left \(7000 spent or reserved today\)\. No sheep was started/,
      );
      return true;
    });
    assert.equal(two.world.calls.filter((c) => c.startsWith("create")).length, panes, "no pane was opened");
    assert.equal(two.events.find((e) => e.event === "budget-exceeded")?.scope, "day");

    // The first sheep spends 2000 and closes: the day counts its spend, not its reservation.
    const p = await one.shepherd.prompt(a.agentId, "work");
    result(one, a.agentId, p.promptId, { spent: { tokens: 2000, outputTokens: 10, costUsd: 0 } });
    await one.shepherd.wait([p.promptId], { timeoutSec: 0 });
    await one.shepherd.close(a.agentId);
    await one.shepherd.spend.flushed();
    assert.deepEqual(await ledger.totals(DAY), { tokens: 3000, costUsd: 0 });
    await startWith(two, { tokens: 3500 });
  });

  it("a delegation reserves all its tasks at once: over the day, none starts; a start that fails lets its reservation go", async () => {
    const s = setup({ dailyCostUsd: 1 });
    await assert.rejects(
      s.shepherd.spend.reserve([{ costUsd: 0.5 }, { costUsd: 0.3 }, { costUsd: 0.3 }]),
      /these 3 sheep reserve \$1\.10, but \$1\.00 of the day's \$1\.00 are left/,
    );
    assert.deepEqual(await s.ledger.totals(DAY), { tokens: 0, costUsd: 0 }, "nothing of the refused delegation is held");
    s.world.onLaunch = "exit";
    const [held] = await s.shepherd.spend.reserve([{ costUsd: 0.4 }]);
    assert.deepEqual(await s.ledger.totals(DAY), { tokens: 0, costUsd: 0.4 });
    await assert.rejects(s.shepherd.start({ definition: def, cwd: "/work", budget: held! }));
    await s.shepherd.spend.flushed();
    assert.deepEqual(await s.ledger.totals(DAY), { tokens: 0, costUsd: 0 });
  });

  it("the day holds across a shepherd that crashed: the next shepherd on the same ledger file counts its sheep's reservation and spend", async () => {
    const dir = await mkdtemp(join(tmpdir(), "budgets-crash-"));
    try {
      const first = setup({ dailyTokens: 10_000 }, new FileSpendLedger(join(dir, "budget"), () => Date.parse(`${DAY}T12:00:00Z`)), "shepherd-1");
      const a = await startWith(first, { tokens: 6000 });
      const p = await first.shepherd.prompt(a.agentId, "work");
      result(first, a.agentId, p.promptId, { spent: { tokens: 6500, outputTokens: 10, costUsd: 0 } });
      await first.shepherd.wait([p.promptId], { timeoutSec: 0 });
      await first.shepherd.spend.flushed();
      // shepherd-1 is gone without a quit; its sheep may still run. A second shepherd, its own ledger object on the same file:
      const second = setup({ dailyTokens: 10_000 }, new FileSpendLedger(join(dir, "budget"), () => Date.parse(`${DAY}T12:00:00Z`)), "shepherd-2");
      await assert.rejects(
        startWith(second, { tokens: 4000 }),
        /this start reserves 4000 tokens, but 3500 of the day's 10000 are left \(6500 spent or reserved today\)/,
      );
      await startWith(second, { tokens: 3500 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a working sheep's spend is seen as its status reports it, before its turn ends", async () => {
    const s = setup({ dailyTokens: 10_000 });
    const a = await startWith(s, { tokens: 1000 });
    await s.shepherd.prompt(a.agentId, "long work");
    s.world.mem(a.agentId).snapshot.spent = { tokens: 420, outputTokens: 20, costUsd: 0 };
    await s.shepherd.refreshFromFiles();
    assert.deepEqual(s.shepherd.views()[0]?.spent, { tokens: 420, outputTokens: 20, costUsd: 0 });
    await s.shepherd.spend.flushed();
    assert.deepEqual((s.ledger as MemoryLedger).days.get(DAY)?.sheep[s.shepherd.registry.agents.get(a.agentId)!.ledgerKey!]?.to.tokens, 420);
  });

  it("a chain that stops lets the reservations of the steps it never started go; the steps that ran keep their spend", async () => {
    const s = setup({ dailyTokens: 10_000 });
    const submit = s.world.files.submit;
    s.world.files.submit = async (agentId, d) => {
      await submit(agentId, d);
      if (d.kind === "prompt")
        setImmediate(() => result(s, agentId, d.promptId, { status: "failed", errorMessage: "boom", spent: { tokens: 300, outputTokens: 1, costUsd: 0 } }));
    };
    const held = await s.shepherd.spend.reserve([{ tokens: 2000 }, { tokens: 3000 }]);
    assert.deepEqual(await s.ledger.totals(DAY), { tokens: 5000, costUsd: 0 });
    const tasks = held.map((budget, i) => ({ definition: def, task: `step ${i}`, cwd: "/work", budget }));
    const items = await new Delegation(s.shepherd, "chain", tasks, { keepOpen: false, maxParallel: 1, waitTimeoutSec: 10 }).run();
    assert.equal(items.length, 1, "the chain stopped after its failed first step");
    await s.shepherd.released();
    await s.shepherd.spend.flushed();
    assert.deepEqual(await s.ledger.totals(DAY), { tokens: 300, costUsd: 0 }, "the first step's spend; nothing of the second is held");
  });

  it("a background delegation resumed after its shepherd died keeps its tasks' budgets: the running sheep is still held to its own, the task that never started gives its reservation back", async () => {
    const world = new MemoryWorld();
    const clock = new FakeClock();
    const store = new MemoryStore();
    const ledger = new MemoryLedger();
    const make = (owner: string) => {
      const s = new Shepherd({
        runtime: world.runtime,
        files: world.files,
        owner,
        clock,
        livenessIntervalMs: 1000,
        startTimeoutMs: 5000,
        store,
        ledger,
        budgets: { dailyTokens: 10_000 },
        ownerAlive: (o) => o === owner,
      });
      s.deliverTo({ deliver: () => undefined, notice: () => undefined });
      return s;
    };
    const first = make("shepherd-1");
    const held = await first.spend.reserve([{ tokens: 2000 }, { tokens: 3000 }]);
    const started = await first.delegateInBackground(
      "parallel",
      held.map((budget, i) => ({ definition: def, task: `task ${i}`, cwd: "/work", budget })),
      { keepOpen: true, maxParallel: 1, waitTimeoutSec: 60 },
    );
    const agentId = started.items[0]!.agentId!;
    assert.deepEqual(await ledger.totals(DAY), { tokens: 5000, costUsd: 0 }, "both tasks reserved");
    // shepherd-1 dies (no dispose, nothing more written). The first task's sheep runs; the second never started.
    // Its start was recorded but the delegation never heard it: the sheep's record alone says the reservation is its own.
    store.dead.add("shepherd-1");
    delete store.state.delegations![0]!.items[0]!.agentId;
    const next = make("shepherd-2");
    await next.attach();
    await next.spend.flushed();
    assert.deepEqual(
      await ledger.totals(DAY),
      { tokens: 2000, costUsd: 0 },
      "the task that never started gave its 3000 back; the running sheep keeps its 2000",
    );
    const rec = next.registry.agents.get(agentId)!;
    assert.deepEqual([rec.budget, rec.ledgerKey], [{ tokens: 2000 }, held[0]!.key], "the adopted sheep is held to its task's budget");
    assert.equal(store.state.delegations![0]!.reservations, undefined, "let go once, then no longer kept");
    // Its turn stopped at the budget settles [budget_exceeded]; the day counts what it spent; nothing more reaches it.
    const promptId = started.items[0]!.promptId!;
    world.mem(agentId).outbox.set(promptId, {
      promptId,
      status: "failed",
      text: "half",
      stopReason: "aborted",
      budgetExceeded: true,
      errorMessage: "the sheep's budget is spent (2100 tokens spent of a budget of 2000); its turn was stopped",
      spent: { tokens: 2100, outputTokens: 40, costUsd: 0 },
    });
    world.ring(agentId);
    const [r] = await next.wait([parsePromptId(promptId)], { timeoutSec: 0 });
    assert.match(r!.error ?? "", /^\[budget_exceeded\] the sheep's budget is spent \(2100 tokens spent of a budget of 2000\).*Spent: 2100\/2000 tokens/);
    await assert.rejects(next.prompt(parseAgentId(agentId), "again"), /\[budget_exceeded\] sheep .* has spent its budget/);
    await next.spend.flushed();
    assert.deepEqual(await ledger.totals(DAY), { tokens: 2100, costUsd: 0 });
    await next.dispose();
  });

  it("the day's warning and limit go out once each as the herd's spend crosses them", async () => {
    const s = setup({ dailyTokens: 1000, warnAt: 0.8 });
    const a = await startWith(s, { tokens: 1000 });
    const told: string[][] = [];
    for (const [i, tokens] of [500, 850, 900, 1000].entries()) {
      const p = await s.shepherd.prompt(a.agentId, `step ${i}`);
      result(s, a.agentId, p.promptId, { spent: { tokens, outputTokens: 0, costUsd: 0 } });
      await s.shepherd.wait([p.promptId], { timeoutSec: 0 });
      await s.shepherd.spend.flushed();
      await settle();
      told.push(s.events.filter((e) => e.scope === "day").map((e) => e.event));
    }
    // Reserved is not spent: at 500 of 1000 (all of it reserved) nothing is told yet.
    assert.deepEqual(told, [[], ["budget-warning"], ["budget-warning"], ["budget-warning", "budget-exceeded"]]);
    assert.deepEqual(await s.shepherd.spend.day(), { day: DAY, used: { tokens: 1000, costUsd: 0 }, daily: { dailyTokens: 1000, warnAt: 0.8 } });
  });

  it("no daily limit (the default budgets {}): there is no day's budget to show", async () => {
    const world = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s0", clock: new FakeClock(), ledger: new MemoryLedger(), budgets: {} });
    assert.equal(await shepherd.spend.day(), undefined);
  });
});
