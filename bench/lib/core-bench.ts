/**
 * Figures of the shepherd core, driven in this process through composeShepherd (no RPC, no
 * shepherd model round trip), with real pi sheep in real panes on the scripted model.
 */
import { composeShepherd } from "../../src/compose.ts";
import { node22, piCli } from "../../test/support/rpc-shepherd.ts";
import { promptAndWait, resultWrittenAt } from "./answers.ts";
import { bareBoot, specHost } from "./bare-boot.ts";
import { herdRound, type HerdRound } from "./herd.ts";
import { memorySample, type MemorySample } from "./memory.ts";
import type { ModelProcess } from "./model.ts";
import { overhead, type Overhead } from "./overhead.ts";
import type { BareMode, RuntimeFixture } from "./runtime-fixture.ts";
import { SheepPool } from "./sheep-pool.ts";
import type { World } from "./world.ts";

export interface CoreConfig {
  sheep: number;
  prompts: number;
  answerDelayMs: number;
  herdSizes: number[];
  herdRounds: number;
  herdDelayMs: number;
  overheadSheep: number;
  overheadWindowMs: number;
  memorySamples: number;
}

export interface CoreFigures {
  /** One read-only multiplexer process (tmux list-panes / herdr pane list), run by the bench. */
  multiplexerCallMs: number[];
  startMs: number[];
  /** Per bare mode; "typed" is the baseline the target is measured against. */
  bareBootMs: Partial<Record<BareMode, number[]>>;
  promptMs: number[];
  answerToWaitMs: number[];
  /** answer-to-wait split where the sheep wrote its result file (its finishedAt). */
  lastByteToResultFileMs: number[];
  resultFileToWaitMs: number[];
  herd: HerdRound[];
  overhead: Overhead;
  /** Resident memory of one sheep's pane against one bare pi's, in pairs. */
  memory: MemorySample[];
}

export async function runCore(fixture: RuntimeFixture, world: World, model: ModelProcess, cfg: CoreConfig, say: (s: string) => void): Promise<CoreFigures> {
  const env = { ...world.env, ...fixture.env };
  const piCommand = [node22, piCli];
  const app = await composeShepherd({ env, cwd: world.work, piCommand });
  const shepherd = app.shepherd;
  // The same launch spec as the shepherd's own host builds, for the bare boot baseline.
  const host = specHost(world.agentDir, piCommand, env);
  const pool = new SheepPool(shepherd, world.agentDir);
  const fig: CoreFigures = {
    multiplexerCallMs: [],
    startMs: [],
    bareBootMs: {},
    promptMs: [],
    answerToWaitMs: [],
    lastByteToResultFileMs: [],
    resultFileToWaitMs: [],
    herd: [],
    overhead: undefined as unknown as Overhead,
    memory: [],
  };
  try {
    for (let i = 0; i < 9; i++) {
      const t0 = performance.now();
      await fixture.probeCall();
      fig.multiplexerCallMs.push(performance.now() - t0);
    }
    say(`  start x${cfg.sheep}, each with bare pi boots (${fixture.bareModes.join(", ")}) around it`);
    for (let i = 0; i < cfg.sheep; i++) {
      // Every start has its own bare boots, taken with the same number of sheep already running;
      // rotating the order cancels drift between the measurements of one group.
      const steps = [
        async () => {
          const t0 = performance.now();
          await pool.start(world.definition, world.work, `s${i + 1}`);
          fig.startMs.push(performance.now() - t0);
        },
        ...fixture.bareModes.map((mode) => async () => {
          const boots = fig.bareBootMs[mode] ?? [];
          fig.bareBootMs[mode] = boots;
          boots.push(await bareBoot(mode, host, fixture, world.definition, world.work));
        }),
      ];
      for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
    }

    say(`  prompt + answer-to-wait x${cfg.prompts}`);
    const first = pool.ids[0]!;
    await promptAndWait(shepherd, model, first, `warm-${fixture.name}`, 0); // pi's first model call loads more code
    for (let k = 0; k < cfg.prompts; k++) {
      const r = await promptAndWait(shepherd, model, first, `a2w-${fixture.name}-${k}`, cfg.answerDelayMs);
      fig.promptMs.push(r.promptMs);
      fig.answerToWaitMs.push(r.waitReturnedAt - r.lastByteAt);
      const fileAt = await resultWrittenAt(world.agentDir, first, r.promptId);
      fig.lastByteToResultFileMs.push(fileAt - r.lastByteAt);
      fig.resultFileToWaitMs.push(r.waitReturnedAt - fileAt);
    }

    say(`  herd ${cfg.herdSizes.join("/")} x${cfg.herdRounds}`);
    await herdRound(shepherd, model, world.agentDir, pool.ids, `herd-warm-${fixture.name}`, 0); // every sheep's first model call
    for (const n of cfg.herdSizes) {
      for (let r = 0; r < cfg.herdRounds; r++) {
        fig.herd.push({ n, ...(await herdRound(shepherd, model, world.agentDir, pool.ids.slice(0, n), `herd-${fixture.name}-${n}-${r}`, cfg.herdDelayMs)) });
      }
    }

    say(`  overhead while waiting on ${cfg.overheadSheep} sheep (${cfg.overheadWindowMs / 1000} s window)`);
    fig.overhead = await overhead(shepherd, fixture, pool.ids.slice(0, cfg.overheadSheep), cfg.overheadWindowMs);

    // pi measured as the pane's own command where the runtime can run it so: pi and nothing else
    const bareMode: BareMode = fixture.bareModes.includes("direct") ? "direct" : "typed";
    say(`  resident memory x${cfg.memorySamples}: a sheep's pane against a bare pi (${bareMode})`);
    for (let i = 0; i < cfg.memorySamples; i++) fig.memory.push(await memorySample(shepherd, fixture, bareMode, host, world.definition, world.work));
    return fig;
  } finally {
    await pool.closeAll();
  }
}
