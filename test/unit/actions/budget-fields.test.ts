/**
 * Where a budget is set (issue 35): `budget` on start and delegate (a task's and the whole
 * delegation's), an agent file's `budget:`, and the user setting `budgets`; each checked where it
 * is read, and the tightest of all given holds.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dailyBudgetsProblem, heldBudget, tightest } from "../../../src/domain/budget.ts";
import { parseAgentFile } from "../../../src/definitions/parse.ts";
import { parseToolCommand } from "../../../src/edge/command.ts";

const refused = (raw: unknown, re: RegExp) =>
  assert.throws(
    () => parseToolCommand(raw),
    (e: Error) => e.message.startsWith("[invalid_params] ") && re.test(e.message),
  );

describe("budgets where they are set", () => {
  it("start and delegate take a budget (an object, or the same as JSON text); anything else is refused naming the field", () => {
    assert.deepEqual((parseToolCommand({ action: "start", agent: "echo", budget: { tokens: 500, costUsd: 0.25 } }) as { budget?: unknown }).budget, {
      tokens: 500,
      costUsd: 0.25,
    });
    assert.deepEqual((parseToolCommand({ action: "start", agent: "echo", budget: '{"outputTokens": 40}' }) as { budget?: unknown }).budget, {
      outputTokens: 40,
    });
    const d = parseToolCommand({
      action: "delegate",
      budget: { tokens: 900 },
      tasks: [
        { agent: "echo", task: "a", budget: { tokens: 100 } },
        { agent: "echo", task: "b" },
      ],
    }) as {
      budget?: unknown;
      tasks: { budget?: unknown }[];
    };
    assert.deepEqual([d.budget, d.tasks[0]!.budget, d.tasks[1]!.budget], [{ tokens: 900 }, { tokens: 100 }, undefined]);
    refused({ action: "start", agent: "echo", budget: { tokens: -1 } }, /start: budget "tokens" must be a number above 0/);
    refused({ action: "start", agent: "echo", budget: { dollars: 1 } }, /start: "budget" has no field "dollars"/);
    refused({ action: "start", agent: "echo", budget: "lots" }, /start: "budget" must be an object/);
    refused(
      { action: "delegate", tasks: [{ agent: "echo", task: "a", budget: { tokens: Number.NaN } }] },
      /tasks\[0\]: budget "tokens" must be a number above 0/,
    );
  });

  it("an agent file's budget is read from its front matter, a bad one makes the file invalid, and no file can loosen another budget", () => {
    const file = (fm: string) => parseAgentFile(`---\nname: w\ndescription: d\n${fm}\n---\nbody\n`, "/a/w.md", "project");
    const ok = file("budget: {tokens: 1000, costUsd: 2}");
    assert.deepEqual(ok.ok ? ok.definition.budget : undefined, { tokens: 1000, costUsd: 2 });
    const bad = file("budget: {tokens: lots}");
    assert.deepEqual(bad.ok ? undefined : bad.reason, 'budget "tokens" must be a number above 0.');
    // A project's file asking for more than the call gave: the call's smaller limit still holds.
    assert.deepEqual(tightest({ tokens: 500 }, undefined, { tokens: 1000, costUsd: 2 }), { tokens: 500, costUsd: 2 });
  });

  it("the budgets setting is checked, and a sheep without its own budget is held to a tenth of each daily limit", () => {
    assert.equal(dailyBudgetsProblem({ dailyTokens: 1000, dailyCostUsd: 2, warnAt: 0.8 }), undefined);
    assert.match(dailyBudgetsProblem({ warnAt: 1.5 }) ?? "", /warnAt/);
    assert.match(dailyBudgetsProblem({ dailyTokens: "all" }) ?? "", /"dailyTokens" must be a number above 0/);
    assert.match(dailyBudgetsProblem({ monthly: 1 }) ?? "", /unknown field "monthly"/);
    assert.deepEqual(heldBudget(undefined, { dailyTokens: 1005, dailyCostUsd: 2 }), { tokens: 100, costUsd: 0.2 });
    assert.deepEqual(heldBudget({ outputTokens: 10 }, { dailyTokens: 1000 }), { outputTokens: 10, tokens: 100 });
    assert.equal(heldBudget(undefined, {}), undefined);
  });
});
