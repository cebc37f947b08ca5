/**
 * Soak: 8 sheep, 200 prompts with seeded random delays, provider failures, closes during waits,
 * aborted waits, killed panes and killed pis; sheep that go are replaced. The core is driven
 * directly (composeShepherd, as the extension does), with real pi sheep in a private tmux server
 * on the scripted model. Every prompt gets exactly one final result, and afterwards no pane, pi
 * process or sheep file the test created remains. SOAK_SEED overrides the seed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { composeShepherd } from "../../src/compose.ts";
import type { Shepherd } from "../../src/core/shepherd.ts";
import type { AgentDefinition, WaitItem } from "../../src/ports/types.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { killSheep, livingSheep, notKept, sheepFiles, sheepPid } from "../support/leftovers.ts";
import { node22, piCli } from "../support/rpc-shepherd.ts";
import { tmuxPanes, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";
import { prng } from "../support/prng.ts";
import { type PromptId, parsePromptId } from "../../src/domain/ids.ts";

const SHEEP = 8;
const PROMPTS = 200;
const SEED = Number(process.env.SOAK_SEED ?? 0xb1ea7);

type Fate = "answer" | "fail" | "close" | "abort" | "killPane" | "killPi";
/** What each fate may end in; a close can lose the race to an answer that was already written. */
const ENDS: Record<Fate, RegExp> = {
  answer: /^completed$/,
  fail: /^failed \[provider_error\] .*soak outage/,
  close: /^cancelled \[cancelled\] /,
  abort: /^completed$/,
  killPane: /^failed \[(pane_gone|pi_exited)\] /,
  killPi: /^failed \[pi_exited\] /,
};

function pickFate(x: number): Fate {
  if (x < 0.66) return "answer";
  if (x < 0.76) return "fail";
  if (x < 0.84) return "close";
  if (x < 0.9) return "abort";
  if (x < 0.95) return "killPane";
  return "killPi";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("soak: 8 sheep, 200 prompts with failures, closes and kills", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let dir: string;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let agentDir: string;
  let shepherd: Shepherd;
  let definition: AgentDefinition;
  const pids: number[] = [];

  before(async () => {
    world = await e2eWorld("soak", { work: true });
    ({ dir, tmux, model, agentDir } = world);
    // The core's shepherd closes what it started before the world ends the rest; its sheep, by pid.
    world.defer(() => killSheep(agentDir, pids));
    world.defer(async () => {
      for (const a of shepherd?.registry.agents.values() ?? []) await shepherd.close(a.agentId).catch(() => undefined);
    });
    shepherd = (await composeShepherd({ env: world.env, cwd: world.cwd, piCommand: [node22, piCli] })).shepherd;
    definition = {
      name: "echo",
      description: "answers as scripted",
      source: "user",
      path: join(agentDir, "agents", "echo.md"),
      systemPrompt: "You answer exactly as scripted.",
    };
  });

  after(() => world?.cleanup());

  it(`every prompt settles exactly once, and nothing is left (seed ${SEED})`, async () => {
    const rnd = prng(SEED);
    // Draw every choice up front, so the plan does not depend on which worker runs first.
    const plan = Array.from({ length: PROMPTS }, (_, n) => ({ n, fate: pickFate(rnd.next()), delayMs: rnd.int(1500), actAfterMs: rnd.int(800) }));
    const finals = new Map<string, { fate: Fate; item: WaitItem }>();
    let next = 0;

    const start = async (slot: number) => {
      const a = await shepherd.start({ definition, cwd: join(dir, "work"), label: `soak-${slot}` });
      const pid = await sheepPid(agentDir, a.agentId);
      pids.push(pid);
      return { ...a, pid };
    };
    /** Waits until the prompt's final result; a timeout is only ever a slow turn, twice at most. */
    const settle = async (promptId: PromptId, signal?: AbortSignal): Promise<WaitItem> => {
      for (let i = 0; i < 3; i++) {
        const [item] = await shepherd.wait([promptId], { timeoutSec: 60, ...(signal ? { signal } : {}) });
        if (item!.status !== "timeout") return item!;
      }
      throw new Error(`prompt ${promptId} did not settle in three minutes`);
    };

    const worker = async (slot: number) => {
      let sheep = await start(slot);
      for (let job = plan[next++]; job; job = plan[next++]) {
        const { n, fate } = job;
        const tag = `soak-${n}`;
        const slow = fate === "close" || fate === "abort" || fate.startsWith("kill");
        const message =
          fate === "fail"
            ? directive({ fail: 500, message: `soak outage ${n}`, delayMs: job.delayMs, tag })
            : directive({ reply: `answer ${n}`, delayMs: slow ? (fate === "abort" ? 3000 : 60_000) : job.delayMs, tag });
        const { promptId } = await shepherd.prompt(sheep.agentId, message);
        let item: WaitItem;
        if (fate === "close") {
          const waiting = settle(promptId);
          await sleep(job.actAfterMs);
          const closed = await shepherd.close(sheep.agentId);
          assert.deepEqual(closed.cancelledPromptIds, [promptId]);
          item = await waiting;
        } else if (fate === "abort") {
          const stop = new AbortController();
          const aborted = settle(promptId, stop.signal);
          await sleep(job.actAfterMs);
          stop.abort();
          await assert.rejects(aborted, /^ShepherdError: \[aborted\] /);
          item = await settle(promptId);
        } else if (fate === "killPane" || fate === "killPi") {
          await untilLogged(model, tag);
          if (fate === "killPane") await tmux.tmux(["kill-pane", "-t", sheep.paneId]);
          else process.kill(sheep.pid, "SIGKILL");
          item = await settle(promptId);
        } else {
          item = await settle(promptId);
        }
        const summary = item.status === "completed" ? item.status : `${item.status} ${item.error}`;
        assert.match(summary, ENDS[fate], `prompt ${n} (${fate}): ${JSON.stringify(item)}`);
        if (item.status === "completed") assert.equal(item.text, `answer ${n}`);
        assert.ok(!finals.has(promptId));
        finals.set(promptId, { fate, item });
        if (fate === "close" || fate.startsWith("kill")) {
          if (fate !== "close") await shepherd.close(sheep.agentId);
          sheep = await start(slot);
        }
      }
      await shepherd.close(sheep.agentId);
    };

    await Promise.all(Array.from({ length: SHEEP }, (_, slot) => worker(slot)));

    assert.equal(finals.size, PROMPTS);
    // Settled means settled: asking again gives the very same result, closed sheep or not.
    for (const [promptId, { item }] of finals) assert.deepEqual((await shepherd.wait([parsePromptId(promptId)], { timeoutSec: 0 }))[0], item);
    const fates = new Set([...finals.values()].map((f) => f.fate));
    assert.deepEqual([...fates].sort(), ["abort", "answer", "close", "fail", "killPane", "killPi"], "the plan exercised every fate");

    assert.deepEqual(await tmuxPanes(tmux.socket)(), [tmux.userPane], "no pane the test created remains");
    assert.deepEqual(await livingSheep(agentDir, pids), [], "no sheep pi is alive");
    assert.deepEqual(notKept(await sheepFiles(agentDir)), [], "only session files remain");
  });
});
