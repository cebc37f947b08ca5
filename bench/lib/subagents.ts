/**
 * The peer most pi users delegate with: pi-subagents (a dev dependency), whose foreground children
 * are sessions inside the parent pi's own process. One pi shepherd loads both extensions, and both
 * tools run the same echo agent on the same scripted model: one task answering after 0.5 s, four
 * in parallel answering after 1 s, whole tool calls, each answer checked.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_WARM_MEMORY_MB } from "../../src/domain/bounds.ts";
import { stateDir } from "../../src/protocol/layout.ts";
import { repoRoot, RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { processAlive } from "./files.ts";
import { treeRssKb } from "./memory.ts";
import type { ModelProcess } from "./model.ts";
import type { PeerSamples, PeerSeries } from "./peer.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { timedCall } from "./tool-call.ts";
import { setUserSetting, setWarm, untilWarm } from "./warm-pool.ts";
import type { World } from "./world.ts";

export const subagentsExtension = join(repoRoot, "node_modules", "pi-subagents", "index.ts");

export interface SubagentsConfig {
  reps: number;
  oneDelayMs: number;
  fourDelayMs: number;
  pool: number;
}

/** One phase: the same calls of both tools in one shepherd, alternating which goes first. */
export interface SubagentsPhase {
  delegate: PeerSamples;
  subagents: PeerSamples;
}

export interface SubagentsFigures {
  answerMs: { one: number; four: number };
  /** The shepherd keeps no warm sheep at all: every delegated task boots its pi. */
  cold: SubagentsPhase;
  /** The shepherd as installed, no pool setting: what comes back after the first call of the session. */
  default?: SubagentsPhase & { memory: { shepherdKb: number; sheepKb: number[]; budgetMb: number } };
  /** The shepherd with warm: {echo: pool}, as the issue measured it before. */
  pool?: SubagentsPhase & { size: number };
}

const series = (): PeerSeries => ({ ms: [], toModelMs: [], fromAnswerMs: [] });
const SETTLE_MS = 1000;

type Args = (k: number) => { delegate: Record<string, unknown>; subagents: Record<string, unknown>; tags: string[] };

export async function runSubagents(
  fixture: RuntimeFixture,
  world: World,
  model: ModelProcess,
  cfg: SubagentsConfig,
  say: (s: string) => void,
): Promise<SubagentsFigures> {
  if (!existsSync(subagentsExtension))
    throw new Error(`pi-subagents is not installed where the bench looks for it: ${subagentsExtension} (npm ci installs it as a dev dependency)`);
  const env = { ...world.env, ...fixture.env };
  const agent = world.definition.name;
  const run = `${fixture.name}-${process.hrtime.bigint()}`;
  const task = (tag: string, delayMs: number) => directive({ reply: tag, delayMs, tag });
  const one: Args = (k) => {
    const tag = `subagents-one-${run}-${k}`;
    return {
      delegate: { action: "delegate", agent, task: task(tag, cfg.oneDelayMs) },
      // Foreground: the child is a session inside this pi's process.
      subagents: { agent, task: task(tag, cfg.oneDelayMs), async: false },
      tags: [tag],
    };
  };
  const four: Args = (k) => {
    const tags = [0, 1, 2, 3].map((j) => `subagents-four-${run}-${k}-${j}`);
    // Parallel work in pi-subagents is a workflow script; each child in the foreground too.
    const children = tags.map((t, j) => ({ key: `t${j}`, agent, task: task(t, cfg.fourDelayMs), async: false }));
    return {
      delegate: { action: "delegate", tasks: tags.map((t) => ({ agent, task: task(t, cfg.fourDelayMs) })) },
      subagents: { workflowScript: `return runs.all(${JSON.stringify(children)});`, async: false },
      tags,
    };
  };
  let seq = 0;
  const phase = async (shepherd: RpcShepherd, before: (which: "one" | "four") => Promise<void>, firstFour: boolean): Promise<SubagentsPhase> => {
    const measured = async (tool: "delegate" | "subagents", args: Args, into?: PeerSeries) => {
      const a = args(++seq);
      await before(a.tags.length === 1 ? "one" : "four");
      const r = await timedCall(shepherd, tool === "delegate" ? "shepherd" : "subagent", a[tool], 180_000);
      checked(tool, r.outcome, a.tags);
      if (!into) return;
      const entries = await Promise.all(a.tags.map((t) => model.entry(t)));
      into.ms.push(r.ms);
      into.toModelMs.push(Math.max(...entries.map((e) => e.receivedAt)) - r.startAt);
      into.fromAnswerMs.push(r.endAt - Math.max(...entries.map((e) => e.lastByteAt!)));
    };
    const out: SubagentsPhase = { delegate: { one: series(), four: series() }, subagents: { one: series(), four: series() } };
    // Each tool's first call in a pi loads code the later ones do not: taken once, not counted.
    // A shepherd whose pool fills with the sheep that come back gets four of them from four tasks.
    for (const tool of ["delegate", "subagents"] as const) await measured(tool, firstFour ? four : one);
    for (let k = 0; k < cfg.reps; k++) {
      for (const [which, args] of [
        ["one", one],
        ["four", four],
      ] as const) {
        const steps = [() => measured("delegate", args, out.delegate[which]), () => measured("subagents", args, out.subagents[which])];
        // Alternating which goes first cancels drift between the two of one round.
        if (k % 2 === 1) steps.reverse();
        for (const s of steps) await s();
      }
    }
    return out;
  };
  const shepherdWith = async <T>(use: (s: RpcShepherd) => Promise<T>): Promise<T> => {
    const s = RpcShepherd.start({ cwd: world.work, env, extension: null, extraArgs: ["-e", subagentsExtension] });
    try {
      return await use(s);
    } finally {
      await s.stop().catch(() => undefined);
    }
  };
  const none = async () => undefined;
  try {
    say(
      `  pi-subagents, cold (no warm sheep): delegate vs pi-subagents in one shepherd, one task (${cfg.oneDelayMs} ms) and four (${cfg.fourDelayMs} ms) x${cfg.reps}`,
    );
    await setPool(world.agentDir, "off");
    const fig: SubagentsFigures = { answerMs: { one: cfg.oneDelayMs, four: cfg.fourDelayMs }, cold: await shepherdWith((s) => phase(s, none, false)) };

    say(`  pi-subagents, default pool (no settings): after the first call of the session x${cfg.reps}`);
    await setPool(world.agentDir, "default");
    fig.default = await shepherdWith(async (s) => {
      // What comes back is ready again before the next call, as a person's next call comes later.
      const back = async (which: "one" | "four") => {
        await untilWarm(s, agent, which === "one" ? 1 : 4, { appearMs: 3000, timeoutMs: 30_000 }).catch(() => false);
        await sleep(SETTLE_MS);
      };
      const p = await phase(s, back, true);
      await back("four");
      await sleep(2000);
      return { ...p, memory: await idleMemory(s, world.agentDir) };
    });

    say(`  pi-subagents, warm pool of ${cfg.pool} (warm: {"${agent}": ${cfg.pool}}): the same x${cfg.reps}`);
    await setPool(world.agentDir, "pool", { [agent]: cfg.pool });
    const pooled = await shepherdWith(async (s) => {
      if (!(await untilWarm(s, agent, cfg.pool))) return undefined;
      const full = async () => {
        await untilWarm(s, agent, cfg.pool);
        await sleep(SETTLE_MS);
      };
      return phase(s, full, false);
    });
    if (pooled) fig.pool = { ...pooled, size: cfg.pool };
    else say("  pi-subagents, warm pool: n/a (no warm pool)");
    return fig;
  } finally {
    await setPool(world.agentDir, "default");
  }
}

/** The pool as the phase wants it: none at all, the default (no setting), or sizes of its own. */
async function setPool(agentDir: string, how: "off" | "default" | "pool", sizes?: Record<string, number>): Promise<void> {
  await setWarm(agentDir, how === "pool" ? sizes : undefined);
  // warmMemory 0: no delegated sheep come back either, as before the default pool.
  await setUserSetting(agentDir, "warmMemory", how === "off" ? 0 : undefined);
}

/** The shepherd's pi and every warm sheep's pane, idle: resident memory from /proc. */
async function idleMemory(shepherd: RpcShepherd, agentDir: string): Promise<{ shepherdKb: number; sheepKb: number[]; budgetMb: number }> {
  const shepherdKb = (await treeRssKb(shepherd.proc.pid!)).kb;
  const dir = join(stateDir(agentDir), "sheep");
  const sheepKb: number[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const status = JSON.parse(await readFile(join(dir, name, "status.json"), "utf8").catch(() => "{}")) as { pid?: number };
    if (status.pid && processAlive(status.pid)) sheepKb.push((await treeRssKb(status.pid)).kb);
  }
  return { shepherdKb, sheepKb, budgetMb: DEFAULT_WARM_MEMORY_MB };
}

/** Every answer is the one scripted for its task, and each tool says each task succeeded. */
function checked(tool: "delegate" | "subagents", outcome: { text: string; details: Record<string, unknown> }, tags: string[]): void {
  const fail = (why: string) => {
    throw new Error(`${tool}: ${why}: ${outcome.text.slice(0, 1500)}`);
  };
  if (tool === "delegate") {
    const results = (outcome.details.results ?? []) as { status?: string; text?: string }[];
    if (results.length !== tags.length || results.some((r, i) => r.status !== "completed" || r.text !== tags[i])) fail("not every task answered as scripted");
    return;
  }
  if (tags.length === 1) {
    const results = (outcome.details.results ?? []) as { exitCode?: number }[];
    if (results.length !== 1 || results[0]!.exitCode !== 0 || !outcome.text.split("\n").includes(tags[0]!)) fail("the task did not answer as scripted");
    return;
  }
  const value = ((outcome.details.workflow ?? {}) as { value?: { ok?: boolean; output?: string }[] }).value ?? [];
  if (value.length !== tags.length || value.some((v, i) => v.ok !== true || !(v.output ?? "").split("\n").includes(tags[i]!)))
    fail("not every child answered as scripted");
}
