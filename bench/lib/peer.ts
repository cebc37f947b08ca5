/**
 * The peer to beat: pi's own example subagent extension (one headless `pi --mode json -p` per
 * task) against the shepherd's delegate, both whole tool calls of a real pi over RPC, on the same
 * scripted model, agent file and tasks. The example is loaded from the installed pi package.
 */
import { existsSync } from "node:fs";
import { cp, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { RpcShepherd, testPiCli } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { type FloorSamples, measureFloor } from "./floor.ts";
import { timedCall } from "./tool-call.ts";
import { setUserSetting, setWarm, untilWarm } from "./warm-pool.ts";
import type { World } from "./world.ts";

export interface PeerConfig {
  reps: number;
  oneDelayMs: number;
  fourDelayMs: number;
  pool: number;
}

/** Per call: its duration, and where it went around the model's answers (from the model's request log). */
export interface PeerSeries {
  ms: number[];
  /** Tool call start to the last of its tasks' requests reaching the model: starting pi, up to its model call. */
  toModelMs: number[];
  /** The last answer's last byte to the tool call's end: the result back to the caller, and what closes. */
  fromAnswerMs: number[];
}

export interface PeerSamples {
  one: PeerSeries;
  four: PeerSeries;
}

export interface PeerFigures {
  /** Each call's answer time: the one task's, and each of the four's. */
  answerMs: { one: number; four: number };
  cold: { delegate: PeerSamples; example: PeerSamples };
  /** The shepherd with a warm pool of `pool`; absent without one. */
  warm?: { pool: number; delegate: PeerSamples; example: PeerSamples };
  /** pi alone, interactive in a pane and headless: where a pane can run pi as its own command (tmux). */
  floor?: FloorSamples;
}

// From the pi the bench runs, so the example is the one shipped with it.
export const exampleSubagent = join(dirname(testPiCli), "..", "..", "examples", "extensions", "subagent", "index.ts");

const SETTLE_MS = 1000;

/** A call's arguments (the same for both tools) and the tags its answers carry in the model's log. */
type Args = (k: number) => { args: Record<string, unknown>; tags: string[] };
const series = (): PeerSeries => ({ ms: [], toModelMs: [], fromAnswerMs: [] });

export async function runPeer(fixture: RuntimeFixture, world: World, model: ModelProcess, cfg: PeerConfig, say: (s: string) => void): Promise<PeerFigures> {
  if (!existsSync(exampleSubagent)) throw new Error(`pi's example subagent extension is not where the installed pi keeps it: ${exampleSubagent}`);
  const env = { ...world.env, ...fixture.env };
  const agent = world.definition.name;
  // The reply is the tag: each answer is found in the model's log by it.
  const task = (tag: string, delayMs: number) => ({ agent, task: directive({ reply: tag, delayMs, tag }) });
  // Both tools take one agent + task, or tasks [{agent, task}].
  // One model serves every runtime of a run: tags name the runtime too, or a later runtime's call
  // would find an earlier one's requests under the same tag.
  const run = `${fixture.name}-${process.hrtime.bigint()}`;
  const one: Args = (k) => ({ args: task(`peer-one-${run}-${k}`, cfg.oneDelayMs), tags: [`peer-one-${run}-${k}`] });
  const four: Args = (k) => {
    const tags = [0, 1, 2, 3].map((j) => `peer-four-${run}-${k}-${j}`);
    return { args: { tasks: tags.map((t) => task(t, cfg.fourDelayMs)) }, tags };
  };
  // A pi user who picks the example instead of delegate has no pi-shepherd installed: its pi and
  // the pi it spawns per task run on an agent dir that is the same but for that package.
  const bareAgentDir = await withoutPackages(world.agentDir);
  const example = RpcShepherd.start({
    cwd: world.work,
    env: { ...env, PI_CODING_AGENT_DIR: bareAgentDir },
    extension: exampleSubagent,
  });
  let seq = 0;
  const measured = async (rpc: RpcShepherd, tool: string, extra: Record<string, unknown>, args: Args, who: string, into?: PeerSeries) => {
    const { args: a, tags } = args(++seq);
    const r = await timedCall(rpc, tool, { ...extra, ...a }, 180_000);
    completed(r.outcome.details, who);
    if (!into) return;
    const entries = await Promise.all(tags.map((t) => model.entry(t)));
    into.ms.push(r.ms);
    into.toModelMs.push(Math.max(...entries.map((e) => e.receivedAt)) - r.startAt);
    into.fromAnswerMs.push(r.endAt - Math.max(...entries.map((e) => e.lastByteAt!)));
  };
  const viaExample = (args: Args, into?: PeerSeries) => measured(example, "subagent", {}, args, "example subagent", into);
  const phase = async (shepherd: RpcShepherd, pool: number | undefined): Promise<{ delegate: PeerSamples; example: PeerSamples }> => {
    // With a pool, each call waits for it to be full again, and a second more (a pi that reported ready
    // still draws its first screen): the refill must not run into the example's call any more than
    // into the delegate's.
    const full = async () => {
      if (!pool) return;
      await untilWarm(shepherd, agent, pool);
      await sleep(SETTLE_MS);
    };
    const viaDelegate = async (args: Args, into?: PeerSeries) => {
      await full();
      await measured(shepherd, "shepherd", { action: "delegate" }, args, "delegate", into);
    };
    const viaExampleHere = async (args: Args, into?: PeerSeries) => {
      await full();
      await viaExample(args, into);
    };
    const out = { delegate: { one: series(), four: series() }, example: { one: series(), four: series() } };
    // Each pi's first tool call loads code the later ones do not: taken once, not counted.
    await viaDelegate(one);
    await viaExampleHere(one);
    for (let k = 0; k < cfg.reps; k++) {
      // Alternating which goes first cancels drift between the two of one repetition.
      const pair = async (which: "one" | "four", args: Args) => {
        const steps = [() => viaDelegate(args, out.delegate[which]), () => viaExampleHere(args, out.example[which])];
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
    // No sheep come back either: every task boots its pi, as it did before the default pool.
    await setUserSetting(world.agentDir, "warmMemory", 0);
    const cold = await withShepherd(world, env, (s) => phase(s, undefined)).finally(() => setUserSetting(world.agentDir, "warmMemory", undefined));
    const fig: PeerFigures = { cold, answerMs: { one: cfg.oneDelayMs, four: cfg.fourDelayMs } };
    if (fixture.bareModes.includes("direct")) {
      say(`  peer, pi alone: its first message to the model, interactive in a pane and headless x${cfg.reps}`);
      fig.floor = await measureFloor(fixture, world, bareAgentDir, model, cfg.reps);
    }
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
  const shepherd = RpcShepherd.start({ cwd: world.work, env, extension: null });
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

/** A copy of the agent dir (models, settings, agent files) without the pi packages its settings install. */
async function withoutPackages(agentDir: string): Promise<string> {
  const dir = `${agentDir}-without-packages`;
  await cp(agentDir, dir, { recursive: true, filter: (src) => !src.startsWith(join(agentDir, "pi-shepherd")) && !src.startsWith(join(agentDir, "sessions")) });
  const path = join(dir, "settings.json");
  const settings = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  delete settings.packages;
  await writeFile(path, JSON.stringify(settings, null, 2), { mode: 0o600 });
  return dir;
}
