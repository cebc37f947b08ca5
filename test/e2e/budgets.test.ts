/**
 * Budgets that hold (issue 35), end to end: a real pi sheep in tmux on the scripted model, whose
 * answers report the usage the test sets. A sheep with a small token budget has its turn stopped by
 * pi's abort after the response that spent it (its tool never finishes, its pane and pi stay), and
 * the prompt settles [budget_exceeded] with the text there was; a start over the day's budget is
 * refused before any pane opens.
 */
import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

describe("budgets with a real pi sheep", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let scene: Scene;

  before(async () => {
    world = await e2eWorld("budgets", { agent: { shepherdSettings: { budgets: { dailyTokens: 5000, warnAt: 0.9 } } }, work: true });
    model = world.model;
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("a sheep whose budget is spent has its turn stopped (pi's abort, never a kill) and the prompt settles [budget_exceeded] with the usage and the text there was", async () => {
    const sheep = await scene.start("thrifty", { budget: { tokens: 500 } });
    const began = Date.now();
    // One response of 700 tokens that asks for a 30 s tool: the budget is spent before the tool could end.
    const promptId = await scene.prompt(
      sheep.agentId,
      directive({
        tag: "B1",
        say: "Counting the flock first.",
        usage: { prompt: 400, completion: 300 },
        rounds: [[{ name: "bash", arguments: { command: "sleep 30" } }]],
        afterTool: "never said",
      }),
    );
    const r = (await scene.ok({ action: "wait", promptId, timeout: 60 })).details.results as {
      status: string;
      error?: string;
      text?: string;
      spent?: { tokens: number };
      budget?: { tokens: number };
    }[];
    const item = r[0]!;
    assert.equal(item.status, "failed");
    assert.match(
      item.error ?? "",
      /^\[budget_exceeded\] the sheep's budget is spent \(700 tokens spent of a budget of 500\); its turn was stopped\. Spent: 700\/500 tokens, 300 output/,
    );
    assert.equal(item.text, "Counting the flock first.", "the answer text there was");
    assert.deepEqual([item.spent?.tokens, item.budget?.tokens], [700, 500]);
    assert.ok(Date.now() - began < 25_000, "stopped, not waited out: the 30 s tool never finished");
    assert.equal(model.log.filter((l) => l.tag === "B1").length, 1, "the model was never asked again after the budget was spent");
    // pi was told to stop, not killed: the same pi runs on in its pane, idle.
    const st = (await scene.ok({ action: "status", agentId: sheep.agentId })).details.status as {
      state: string;
      paneAlive: boolean;
      spent?: { tokens: number };
    };
    assert.deepEqual([st.state, st.paneAlive, st.spent?.tokens], ["idle", true, 700]);
    process.kill(sheep.pid, 0);
    // The shepherd's state and the day's ledger both hold the spend.
    const state = JSON.parse(await readFile(join(world!.agentDir, "pi-shepherd", "state.json"), "utf8")) as {
      agents: { agentId: string; spent?: { tokens: number } }[];
    };
    assert.equal(state.agents.find((a) => a.agentId === sheep.agentId)?.spent?.tokens, 700);
    const day = new Date().toISOString().slice(0, 10);
    const ledger = join(world!.agentDir, "pi-shepherd", "budget", `${day}.json`);
    assert.equal((await stat(ledger)).mode & 0o777, 0o600);
  });

  it("a start whose reservation does not fit what is left of the day is refused before any pane opens, naming the numbers", async () => {
    const panes = tmuxPanes(world!.tmux.socket);
    const before = await panes();
    const text = await scene.fails({ action: "start", agent: "echo", label: "spendthrift", budget: { tokens: 4500 } }, /^\[budget_exceeded\]/);
    assert.match(text, /this start reserves 4500 tokens, but 4300 of the day's 5000 are left \(700 spent or reserved today\)\. No sheep was started/);
    assert.deepEqual(await panes(), before, "no pane was opened");
  });
});
