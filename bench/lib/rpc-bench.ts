/**
 * Figures of whole tool calls: a real pi shepherd in RPC mode (pi-shepherd loaded as its
 * extension) on the scripted model, calling the shepherd tool on real pi sheep. Times are
 * taken from the shepherd's own tool_execution_start/end events as the bench receives them.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sheepDir } from "../../src/protocol/layout.ts";
import { node22, piCli, RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { bareBoot, specHost } from "./bare-boot.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import { untilGone } from "./files.ts";
import type { ModelProcess } from "./model.ts";
import type { BareMode, RuntimeFixture } from "./runtime-fixture.ts";
import { timedCall } from "./tool-call.ts";
import type { World } from "./world.ts";

export interface RpcConfig {
  /** Started by the start tool call; the overhead wait waits on all of them. */
  sheep: number;
  /** The first starts, each paired with bare boots of every mode the runtime has. */
  pairedStarts: number;
  prompts: number;
  answerDelayMs: number;
  overheadWindowMs: number;
}

export interface RpcFigures {
  startToolMs: number[];
  /** The paired starts only, against bare pi boots taken beside each: the RPC phase's own baseline. */
  pairedStartToolMs: number[];
  bareBootMs: Partial<Record<BareMode, number[]>>;
  promptToolMs: number[];
  /** From the sheep's last answer byte to the end event of the wait tool call. */
  answerToWaitToolMs: number[];
  overhead: { sheep: number; windowMs: number; cpuMs: number; multiplexerCalls: number; idle: { windowMs: number; cpuMs: number; multiplexerCalls: number } };
}

export async function runRpc(fixture: RuntimeFixture, world: World, model: ModelProcess, cfg: RpcConfig, say: (s: string) => void): Promise<RpcFigures> {
  const env = { ...world.env, ...fixture.env };
  const rpc = RpcShepherd.start({ cwd: world.work, env, extension: null });
  const pids: number[] = [];
  const fig: RpcFigures = {
    startToolMs: [],
    pairedStartToolMs: [],
    bareBootMs: {},
    promptToolMs: [],
    answerToWaitToolMs: [],
    overhead: undefined as unknown as RpcFigures["overhead"],
  };
  const call = (args: Record<string, unknown>, timeoutMs = 120_000) => timedCall(rpc, "shepherd", args, timeoutMs);
  const prompt = async (agentId: string, message: string) => {
    const r = await call({ action: "prompt", agentId, message });
    return { ...r, promptId: (r.outcome.details.prompt as { promptId: string }).promptId };
  };
  try {
    const paired = Math.min(cfg.pairedStarts, cfg.sheep);
    say(`  rpc: start x${cfg.sheep}, the first ${paired} each with bare pi boots (${fixture.bareModes.join(", ")}) beside it`);
    const host = specHost(world.agentDir, [node22, piCli], env);
    const ids: string[] = [];
    for (let i = 0; i < cfg.sheep; i++) {
      const start = async () => {
        const r = await call({ action: "start", agent: world.definition.name, label: `r${i + 1}` });
        fig.startToolMs.push(r.ms);
        if (i < paired) fig.pairedStartToolMs.push(r.ms);
        const agentId = (r.outcome.details.agent as { agentId: string }).agentId;
        ids.push(agentId);
        const status = JSON.parse(await readFile(join(sheepDir(world.agentDir, agentId), "status.json"), "utf8")) as { pid: number };
        pids.push(status.pid);
      };
      // As in the core phase: rotating the order cancels drift between a start and its bare boots.
      const bare = (mode: BareMode) => async () => {
        const boots = fig.bareBootMs[mode] ?? [];
        fig.bareBootMs[mode] = boots;
        boots.push(await bareBoot(mode, host, fixture, world.definition, world.work));
      };
      const bares = i < paired ? fixture.bareModes.map(bare) : [];
      const steps = [start, ...bares];
      for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
    }

    say(`  rpc: prompt + wait x${cfg.prompts}`);
    const first = ids[0]!;
    const warm = await prompt(first, directive({ reply: "warm" }));
    await call({ action: "wait", promptIds: [warm.promptId] });
    for (let k = 0; k < cfg.prompts; k++) {
      const tag = `rpc-${fixture.name}-${k}`;
      const p = await prompt(first, directive({ reply: tag, delayMs: cfg.answerDelayMs, tag }));
      fig.promptToolMs.push(p.endAt - p.startAt);
      const w = await call({ action: "wait", promptIds: [p.promptId] });
      const item = (w.outcome.details.results as { status: string; text?: string }[])[0];
      if (item?.status !== "completed" || item.text !== tag) throw new Error(`rpc wait answered ${JSON.stringify(item)}`);
      const entry = await model.entry(tag);
      // Counted only when the wait was already running when the answer came, as intended.
      if (w.startAt < entry.lastByteAt!) fig.answerToWaitToolMs.push(w.endAt - entry.lastByteAt!);
    }

    say(`  rpc: overhead while waiting on ${cfg.sheep} sheep (${cfg.overheadWindowMs / 1000} s window)`);
    const pid = rpc.proc.pid!;
    const begin = async () => {
      const calls = await fixture.multiplexerCalls();
      return { calls, at: performance.now(), cpu: procCpu(pid).own };
    };
    const end = async () => {
      const s = { at: performance.now(), cpu: procCpu(pid).own };
      return { ...s, calls: await fixture.multiplexerCalls() };
    };
    const i0 = await begin();
    await sleep(2000);
    const i1 = await end();
    const promptIds: string[] = [];
    // Long enough that the first sheep prompted is still busy when the window closes, however slow the prompting.
    const busyMs = cfg.overheadWindowMs + 4000 + ids.length * 500;
    for (const id of ids) promptIds.push((await prompt(id, directive({ reply: "late", delayMs: busyMs }))).promptId);
    const started = rpc.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", 60_000);
    const waiting = call({ action: "wait", promptIds }, 180_000);
    await started;
    await sleep(500);
    const a = await begin();
    await sleep(cfg.overheadWindowMs);
    const b = await end();
    const w = await waiting;
    const items = w.outcome.details.results as { status: string }[];
    if (!items.every((i) => i.status === "completed")) throw new Error(`rpc overhead wait: ${JSON.stringify(items)}`);
    fig.overhead = {
      sheep: ids.length,
      windowMs: b.at - a.at,
      cpuMs: b.cpu - a.cpu,
      multiplexerCalls: b.calls - a.calls,
      idle: { windowMs: i1.at - i0.at, cpuMs: i1.cpu - i0.cpu, multiplexerCalls: i1.calls - i0.calls },
    };
    return fig;
  } finally {
    // closeOnExit: the shepherd closes its sheep as it quits.
    await rpc.stop().catch(() => undefined);
    await Promise.all(pids.map((p) => untilGone(p)));
  }
}
