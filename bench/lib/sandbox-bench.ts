/**
 * Sandboxed sheep against unsandboxed ones in the same run (issue 33's Speed): a real pi shepherd
 * over RPC, real pi sheep in real tmux panes, real bubblewrap and the shepherd's egress proxy, the
 * scripted model. Each step alternates the two sides (which goes first too), so drift falls on both:
 * cold starts; prompt + wait on one sheep of each; a model request timed from inside a sheep
 * (bench/lib/sandbox-probe.ts); then windows of 16 working sheep of each side, their answers
 * streaming, in the order plain, sandboxed, sandboxed, plain, then one of each waiting for the
 * answer (bench/lib/sandbox-busy.ts): the shepherd's CPU and memory.
 */
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { type BusyWindow, busyWindow } from "./sandbox-busy.ts";
import { probeCommand, probeSamples, writeProbe } from "./sandbox-probe.ts";
import { timedCall } from "./tool-call.ts";
import type { World } from "./world.ts";

export interface SandboxConfig {
  /** Cold starts of each side, alternating, after one of each not counted. */
  starts: number;
  prompts: number;
  answerDelayMs: number;
  /** Requests per probe run inside a sheep, and probe runs per side. */
  requests: number;
  probes: number;
  busySheep: number;
  windowMs: number;
}

export type Side = "plain" | "sandboxed";

export interface SideSeries {
  startMs: number[];
  promptMs: number[];
  answerToWaitMs: number[];
  /** The prompt call's end to the sheep's model request reaching the model. */
  toModelMs: number[];
  /** Requests timed inside a sheep: through forwarder + proxy when sandboxed, straight when not. */
  requestMs: number[];
  /** Windows of streaming answers. */
  busy: BusyWindow[];
  /** Windows of sheep waiting for their answers. */
  waiting: BusyWindow[];
}

export interface SandboxFigures {
  /** The first start of each side, not counted: the sandboxed one checks bubblewrap once for the shepherd. */
  firstStartMs: Record<Side, number>;
  sides: Record<Side, SideSeries>;
}

const SIDES: readonly Side[] = ["plain", "sandboxed"];
/** Alternates which side goes first. */
const order = (i: number): readonly Side[] => (i % 2 === 0 ? SIDES : [...SIDES].reverse());

export async function runSandbox(
  fixture: RuntimeFixture,
  world: World,
  model: ModelProcess,
  cfg: SandboxConfig,
  say: (s: string) => void,
): Promise<SandboxFigures> {
  const shepherd = RpcShepherd.start({ cwd: world.work, env: { ...world.env, ...fixture.env }, extension: null });
  try {
    return await measure(shepherd, world, model, cfg, say);
  } finally {
    await shepherd.stop().catch(() => undefined);
  }
}

async function measure(shepherd: RpcShepherd, world: World, model: ModelProcess, cfg: SandboxConfig, say: (s: string) => void): Promise<SandboxFigures> {
  const call = (args: Record<string, unknown>, timeoutMs = 180_000) => timedCall(shepherd, "shepherd", args, timeoutMs);
  const ids: Record<Side, string[]> = { plain: [], sandboxed: [] };
  const start = async (side: Side, label: string) => {
    const r = await call({ action: "start", agent: world.definition.name, label, ...(side === "sandboxed" ? { sandbox: true } : {}) });
    const agent = r.outcome.details.agent as { agentId: string; sandboxed?: boolean };
    if ((agent.sandboxed === true) !== (side === "sandboxed")) throw new Error(`sandbox bench: ${label} started with sandboxed=${agent.sandboxed}`);
    ids[side].push(agent.agentId);
    return r.ms;
  };
  const empty = (): SideSeries => ({ startMs: [], promptMs: [], answerToWaitMs: [], toModelMs: [], requestMs: [], busy: [], waiting: [] });
  const fig: SandboxFigures = { firstStartMs: { plain: 0, sandboxed: 0 }, sides: { plain: empty(), sandboxed: empty() } };

  say(`  sandbox: a first start of each side, then ${cfg.starts} cold starts of each, alternating`);
  for (const side of SIDES) fig.firstStartMs[side] = await start(side, `${side}-first`);
  for (let i = 0; i < cfg.starts; i++) for (const side of order(i)) fig.sides[side].startMs.push(await start(side, `${side}-${i}`));

  say(`  sandbox: prompt + wait x${cfg.prompts} on one sheep of each side, alternating`);
  const ask = async (side: Side, tag: string, keep: boolean) => {
    const p = await call({ action: "prompt", agentId: ids[side][0]!, message: directive({ reply: tag, delayMs: cfg.answerDelayMs, tag }) });
    const promptId = (p.outcome.details.prompt as { promptId: string }).promptId;
    const w = await call({ action: "wait", promptIds: [promptId] });
    const item = (w.outcome.details.results as { status: string; text?: string }[])[0];
    if (item?.status !== "completed" || item.text !== tag) throw new Error(`sandbox bench wait answered ${JSON.stringify(item)}`);
    const entry = await model.entry(tag);
    if (!keep) return;
    const s = fig.sides[side];
    s.promptMs.push(p.ms);
    s.toModelMs.push(entry.receivedAt - p.endAt);
    // Counted only when the wait was already running when the answer came, as intended.
    if (w.startAt < entry.lastByteAt!) s.answerToWaitMs.push(w.endAt - entry.lastByteAt!);
  };
  for (const side of SIDES) await ask(side, `sandbox-bench-warm-${side}`, false);
  for (let k = 0; k < cfg.prompts; k++) for (const side of order(k)) await ask(side, `sandbox-bench-${side}-${k}`, true);

  say(`  sandbox: ${cfg.probes} x ${cfg.requests} model requests timed inside a sheep of each side, alternating`);
  const probe = await writeProbe(world.work);
  for (let k = 0; k < cfg.probes; k++) {
    for (const side of order(k)) {
      const tag = `sandbox-bench-probe-${side}-${k}`;
      const command = probeCommand(probe, model.baseUrl, cfg.requests, side === "sandboxed" ? "proxy" : "direct");
      const p = await call({
        action: "prompt",
        agentId: ids[side][0]!,
        message: directive({ rounds: [[{ name: "bash", arguments: { command } }]], afterTool: "ok", tag }),
      });
      const promptId = (p.outcome.details.prompt as { promptId: string }).promptId;
      const w = await call({ action: "wait", promptIds: [promptId] });
      const item = (w.outcome.details.results as { status: string }[])[0];
      if (item?.status !== "completed") throw new Error(`sandbox bench probe: ${JSON.stringify(item)}`);
      const last = (await model.log()).filter((l) => l.tag === tag).at(-1);
      fig.sides[side].requestMs.push(...probeSamples(last?.toolTexts.at(-1) ?? ""));
    }
  }

  say(
    `  sandbox: ${cfg.busySheep} working sheep of each side, one wait each, ${cfg.windowMs / 1000} s windows: streaming plain, sandboxed, sandboxed, plain; waiting sandboxed, plain`,
  );
  for (const side of SIDES) while (ids[side].length < cfg.busySheep) await start(side, `${side}-busy-${ids[side].length}`);
  for (const [k, side] of (["plain", "sandboxed", "sandboxed", "plain"] as const).entries()) {
    fig.sides[side].busy.push(await busyWindow(shepherd, call, model, ids[side].slice(0, cfg.busySheep), `sandbox-busy-${k}-${side}`, cfg.windowMs, true));
  }
  for (const [k, side] of (["sandboxed", "plain"] as const).entries()) {
    fig.sides[side].waiting.push(await busyWindow(shepherd, call, model, ids[side].slice(0, cfg.busySheep), `sandbox-wait-${k}-${side}`, cfg.windowMs, false));
  }
  for (const side of SIDES) for (const id of ids[side]) await call({ action: "close", agentId: id });
  return fig;
}
