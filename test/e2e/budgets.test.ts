/**
 * Budgets that hold (issue 35), end to end: a real pi sheep in tmux on the scripted model, whose
 * answers report the usage the test sets. A sheep with a small token budget has its turn stopped by
 * pi's abort after the response that spent it (its tool never finishes, its pane and pi stay), and
 * the prompt settles [budget_exceeded] with the text there was; a start and a delegation over the
 * day's budget are refused before any pane opens; a sheep's spend at its warning line is one `budget`
 * notice on a webhook (a local HTTP receiver); the day's spend outlives a SIGKILLed shepherd, and
 * the next shepherd on the agent dir refuses a start that would not fit; a background chain's step
 * is still stopped at its budget by its sheep after a /reload and after a SIGKILLed shepherd, and the
 * step that never started gives its reservation back. The tests run in order on one day's ledger:
 * each names the day's numbers the ones before it left.
 */
import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { repoRoot } from "../support/rpc-shepherd.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("budgets with a real pi sheep", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let scene: Scene;
  let receiver: Server;
  /** The webhook's POSTs (its JSON bodies), budget notices only. */
  const posts: { event: string; agentId: string | null; label: string | null; text: string }[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        posts.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    world = await e2eWorld("budgets", {
      agent: {
        shepherdSettings: {
          budgets: { dailyTokens: 5000, warnAt: 0.9 },
          notify: { channels: [{ type: "webhook", url, events: ["budget"] }] },
        },
      },
      work: true,
    });
    model = world.model;
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms: number): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
      await sleep(200);
    }
  }

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

  it("a delegation whose sheep do not fit what is left of the day is refused before any start: no pane, the numbers named", async () => {
    const panes = tmuxPanes(world!.tmux.socket);
    const before = await panes();
    const text = await scene.fails(
      {
        action: "delegate",
        tasks: [
          { agent: "echo", task: directive({ reply: "never", tag: "DG1" }) },
          { agent: "echo", task: directive({ reply: "never", tag: "DG2" }) },
        ],
        budget: { tokens: 9000 },
      },
      /^\[budget_exceeded\]/,
    );
    // The delegation's 9000 shared by its 2 tasks: both reserved at once, neither fits with the other.
    assert.match(text, /these 2 sheep reserve 9000 tokens, but 4300 of the day's 5000 are left \(700 spent or reserved today\)\. No sheep was started/);
    assert.deepEqual(await panes(), before, "no pane was opened");
    assert.equal(model.log.filter((l) => l.tag === "DG1" || l.tag === "DG2").length, 0, "no sheep asked the model");
  });

  it("a sheep's spend at its warning line is one `budget` notice on the webhook, naming the numbers", async () => {
    const sheep = await scene.start("watchful", { budget: { tokens: 1000 } });
    // 950 of 1000: past warnAt (0.9), under the limit; the answer is whole.
    const promptId = await scene.prompt(sheep.agentId, directive({ tag: "W1", reply: "Grazing quietly.", usage: { prompt: 600, completion: 350 } }));
    const r = (await scene.ok({ action: "wait", promptId, timeout: 60 })).details.results as { status: string; text?: string }[];
    assert.deepEqual([r[0]!.status, r[0]!.text], ["completed", "Grazing quietly."]);
    const about = () => posts.filter((p) => p.agentId === sheep.agentId);
    const [got] = await until("the budget notice", () => (about().length > 0 ? about() : undefined), 60_000);
    assert.deepEqual([got!.event, got!.label], ["budget", "watchful"]);
    assert.match(got!.text, /^pi-shepherd: watchful \(a_\w+\) on local reached a budget line\n/);
    assert.match(got!.text, /its budget is at its warning line: spent 950\/1000 tokens, 350 output/);
    // The notice window and the courier's looks pass: still one, and no limit was reached.
    await sleep(12_000);
    assert.equal(about().length, 1, "one notice");
    assert.doesNotMatch(about()[0]!.text, /at its limit/);
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("the day's spend outlives a SIGKILLed shepherd: the next shepherd on the agent dir refuses a start that would not fit", async () => {
    // The day so far: 700 (thrifty, open) + 950 (watchful, closed) = 1650.
    const sheep = await scene.start("spender", { budget: { tokens: 1000 } });
    // 1200 spent in one whole answer, past its reservation of 1000: the day counts the spend, the larger.
    const promptId = await scene.prompt(sheep.agentId, directive({ tag: "K1", reply: "Spent it all.", usage: { prompt: 900, completion: 300 } }));
    const r = (await scene.ok({ action: "wait", promptId, timeout: 60 })).details.results as { status: string; error?: string }[];
    assert.match(r[0]!.error ?? "", /^\[budget_exceeded\] the sheep's budget is spent \(1200 tokens spent of a budget of 1000\)/);
    const ledger = join(world!.agentDir, "pi-shepherd", "budget", `${new Date().toISOString().slice(0, 10)}.json`);
    await until(
      "the spend in the day's ledger",
      async () => (JSON.stringify(JSON.parse(await readFile(ledger, "utf8"))).includes('"tokens":1200') ? true : undefined),
      30_000,
    );
    scene.shepherd.proc.kill("SIGKILL");
    try {
      await scene.shepherd.proc;
    } catch {
      // killed, as meant
    }
    const next = world!.scene();
    const panes = tmuxPanes(world!.tmux.socket);
    const before = await panes();
    const text = await next.fails({ action: "start", agent: "echo", label: "latecomer", budget: { tokens: 2500 } }, /^\[budget_exceeded\]/);
    assert.match(text, /this start reserves 2500 tokens, but 2150 of the day's 5000 are left \(2850 spent or reserved today\)\. No sheep was started/);
    assert.deepEqual(await panes(), before, "no pane was opened");
    // What fits still starts: the day is held, not shut.
    const fits = await next.start("frugal", { budget: { tokens: 2000 } });
    await next.ok({ action: "close", agentId: fits.agentId });
    await next.shepherd.stop();
  });

  /**
   * A background chain whose first step's model answers only after `between` (a /reload, a SIGKILL and
   * the next shepherd) ran: 700 tokens of a 500-token budget with a 30 s tool. Returns the scene the
   * delegation's message reached and the message's items.
   */
  async function chainAcross(tag: string, usage: { prompt: number; completion: number }, budget: number, between: (s: Scene) => Promise<Scene>) {
    const first = world!.scene({ extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
    const started = await first.ok({
      action: "delegate",
      background: true,
      chain: [
        {
          agent: "echo",
          budget: { tokens: budget },
          task: directive({
            tag,
            delayMs: 8000,
            say: "Counting past the reload.",
            usage,
            rounds: [[{ name: "bash", arguments: { command: "sleep 30" } }]],
            afterTool: "never said",
          }),
        },
        { agent: "echo", budget: { tokens: 1000 }, task: directive({ reply: "never asked", tag: `${tag}-2` }) },
      ],
    });
    const delegationId = started.details.delegationId as string;
    const began = Date.now();
    const last = await between(first);
    const pushed = await last.shepherd.untilPush((d) => d.kind === "delegation" && d.delegationId === delegationId, 90_000);
    // The message starts a turn of the shepherd's model: the next call waits for it to end.
    await last.shepherd.idle();
    assert.ok(Date.now() - began < 40_000, "stopped, not waited out: the 30 s tool never finished");
    assert.equal(model.log.filter((l) => l.tag === tag).length, 1, "the model was never asked again after the budget was spent");
    assert.equal(model.log.filter((l) => l.tag === `${tag}-2`).length, 0, "the second step never started");
    return { last, items: pushed.details.items as { status: string; error?: string; text?: string }[] };
  }

  it("a background chain's step is still stopped at its budget after a /reload; the step that never started gives its reservation back", async () => {
    // The day so far: 700 (thrifty) + 950 (watchful) + 1200 (spender) = 2850; the chain reserves 500 + 1000.
    const { last, items } = await chainAcross("RL", { prompt: 400, completion: 300 }, 500, async (s) => {
      await s.shepherd.command({ type: "prompt", message: "/test-reload" });
      return s;
    });
    assert.equal(items[0]!.status, "failed");
    assert.match(items[0]!.error ?? "", /^\[budget_exceeded\] the sheep's budget is spent \(700 tokens spent of a budget of 500\)/);
    assert.equal(items[0]!.text, "Counting past the reload.");
    assert.equal(items[1]!.status, "cancelled");
    // 2850 + the first step's 700: the second step's 1000 is no longer reserved.
    const text = await last.fails({ action: "start", agent: "echo", label: "after-reload", budget: { tokens: 1500 } }, /^\[budget_exceeded\]/);
    assert.match(text, /this start reserves 1500 tokens, but 1450 of the day's 5000 are left \(3550 spent or reserved today\)/);
    await last.shepherd.stop();
  });

  it("a background chain's step is still stopped at its budget after its shepherd was SIGKILLed; the next shepherd gives the unstarted step's reservation back", async () => {
    // The day so far: 3550; the chain reserves 400 + 1000 of the 1450 left.
    const { last, items } = await chainAcross("KL", { prompt: 300, completion: 150 }, 400, async (s) => {
      s.shepherd.proc.kill("SIGKILL");
      try {
        await s.shepherd.proc;
      } catch {
        // killed, as meant
      }
      const next = world!.scene();
      await next.shepherd.command({ type: "get_state" });
      return next;
    });
    assert.equal(items[0]!.status, "failed");
    assert.match(items[0]!.error ?? "", /^\[budget_exceeded\] the sheep's budget is spent \(450 tokens spent of a budget of 400\)/);
    assert.equal(items[1]!.status, "cancelled");
    // 3550 + the first step's 450: the killed shepherd's reservation of the second step's 1000 was let go by the next one.
    const text = await last.fails({ action: "start", agent: "echo", label: "after-kill", budget: { tokens: 1100 } }, /^\[budget_exceeded\]/);
    assert.match(text, /this start reserves 1100 tokens, but 1000 of the day's 5000 are left \(4000 spent or reserved today\)/);
  });
});
