/**
 * The peer to beat: pi's own example subagent extension (one headless `pi --mode json -p` per
 * task) against the shepherd's delegate, both whole tool calls of a real pi over RPC, on the same
 * scripted model, agent file and tasks. The example is loaded from the installed pi package.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { piCli, RpcShepherd } from "../../test/support/rpc-shepherd.js";
import { directive } from "../../test/support/scripted-model.js";
import type { RuntimeFixture } from "./runtime-fixture.js";
import { timedCall } from "./tool-call.js";
import { setWarm, untilWarm } from "./warm-pool.js";
import type { World } from "./world.js";

export interface PeerConfig {
  reps: number;
  oneDelayMs: number;
  fourDelayMs: number;
  pool: number;
}

export interface PeerSamples {
  one: number[];
  four: number[];
}

export interface PeerFigures {
  cold: { delegate: PeerSamples; example: PeerSamples };
  /** The shepherd with a warm pool of `pool`; absent without one. */
  warm?: { pool: number; delegate: PeerSamples; example: PeerSamples };
}

export const exampleSubagent = join(dirname(piCli), "..", "..", "examples", "extensions", "subagent", "index.ts");

type Args = (task: (reply: string, delayMs: number) => string, agent: string, k: number) => Record<string, unknown>;
const tasks = (n: number, tag: string, delayMs: number, task: (reply: string, delayMs: number) => string, agent: string) =>
  Array.from({ length: n }, (_, j) => ({ agent, task: task(`${tag}-${j}`, delayMs) }));

export async function runPeer(fixture: RuntimeFixture, world: World, cfg: PeerConfig, say: (s: string) => void): Promise<PeerFigures> {
  if (!existsSync(exampleSubagent)) throw new Error(`pi's example subagent extension is not where the installed pi keeps it: ${exampleSubagent}`);
  const env = { ...world.env, ...fixture.env };
  const agent = world.definition.name;
  const task = (reply: string, delayMs: number) => directive({ reply, delayMs });
  // The same task lists for both tools: the two take one agent + task, or tasks [{agent, task}].
  const one: Args = (t, a, k) => ({ agent: a, task: t(`one-${k}`, cfg.oneDelayMs) });
  const four: Args = (t, a, k) => ({ tasks: tasks(4, `four-${k}`, cfg.fourDelayMs, t, a) });
  const example = RpcShepherd.start({ cwd: world.work, env, extension: exampleSubagent });
  let seq = 0;
  const viaExample = async (args: Args) => {
    const r = await timedCall(example, "subagent", args(task, agent, ++seq), 180_000);
    completed(r.outcome.details, "example subagent");
    return r.ms;
  };
  const phase = async (shepherd: RpcShepherd, pool: number | undefined): Promise<{ delegate: PeerSamples; example: PeerSamples }> => {
    const viaDelegate = async (args: Args) => {
      if (pool) await untilWarm(shepherd, agent, pool);
      const r = await timedCall(shepherd, "shepherd", { action: "delegate", ...args(task, agent, ++seq) }, 180_000);
      completed(r.outcome.details, "delegate");
      return r.ms;
    };
    const out = { delegate: { one: [] as number[], four: [] as number[] }, example: { one: [] as number[], four: [] as number[] } };
    // Each pi's first tool call loads code the later ones do not: taken once, not counted.
    await viaDelegate(one);
    await viaExample(one);
    for (let k = 0; k < cfg.reps; k++) {
      // Alternating which goes first cancels drift between the two of one repetition.
      const pair = async (which: "one" | "four", args: Args) => {
        const steps = [async () => out.delegate[which].push(await viaDelegate(args)), async () => out.example[which].push(await viaExample(args))];
        if (k % 2 === 1) steps.reverse();
        for (const s of steps) await s();
      };
      await pair("one", one);
      await pair("four", four);
    }
    return out;
  };
  try {
    say(`  peer, cold: delegate vs pi's example subagent, one task (${cfg.oneDelayMs} ms) and four (${cfg.fourDelayMs} ms) x${cfg.reps}`);
    const cold = await withShepherd(world, env, (s) => phase(s, undefined));
    const fig: PeerFigures = { cold };
    await setWarm(world.agentDir, { [agent]: cfg.pool });
    try {
      const warm = await withShepherd(world, env, async (s) => {
        if (!(await untilWarm(s, agent, cfg.pool))) return undefined;
        say(`  peer, warm pool of ${cfg.pool}: the same x${cfg.reps}`);
        return phase(s, cfg.pool);
      });
      if (warm) fig.warm = { pool: cfg.pool, ...warm };
      else say("  peer, warm: n/a (no warm pool)");
    } finally {
      await setWarm(world.agentDir, undefined);
    }
    return fig;
  } finally {
    await example.stop().catch(() => undefined);
  }
}

async function withShepherd<T>(world: World, env: NodeJS.ProcessEnv, use: (s: RpcShepherd) => Promise<T>): Promise<T> {
  const shepherd = RpcShepherd.start({ cwd: world.work, env });
  try {
    return await use(shepherd);
  } finally {
    // closeOnExit: whatever the shepherd still runs (its pool) closes as it quits.
    await shepherd.stop().catch(() => undefined);
  }
}

function completed(details: Record<string, unknown>, who: string): void {
  const results = (details.results ?? []) as { status?: string }[];
  if (results.length === 0 || !results.every((r) => r.status === "completed"))
    throw new Error(`${who}: not every task completed: ${JSON.stringify(results).slice(0, 2000)}`);
}
