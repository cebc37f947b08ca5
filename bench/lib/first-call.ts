/**
 * Issue 36's first call: the first `delegate` of a new shepherd against the first pi-subagents call
 * of a new shepherd, the scripted model streaming each call's arguments at a stated rate for both
 * (as a real model writes them), each call timed from the prompt sent to its result, so the model's
 * stream counts for both. pi-shepherd twice: with speculative start (its default) and without.
 */
import { epochNow, sleep } from "./clock.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { subagentsExtension } from "./subagents.ts";
import { setUserSetting } from "./warm-pool.ts";
import type { World } from "./world.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";

export interface FirstCallConfig {
  reps: number;
  /** The rate the model writes each tool call's arguments at. */
  tokensPerSec: number;
  oneDelayMs: number;
  fourDelayMs: number;
  /** After pi answered its first RPC command: what a person takes to type a first prompt, for both. */
  settleMs: number;
}

export type FirstSide = "speculative" | "plain" | "subagents";
export type FirstSamples = Record<FirstSide, { one: number[]; four: number[] }>;

export interface FirstCallFigures {
  tokensPerSec: number;
  answerMs: { one: number; four: number };
  ms: FirstSamples;
  /** The arguments' length in characters of each side's calls: what the stream takes. */
  argsChars: Record<FirstSide, { one: number; four: number }>;
}

export async function runFirstCall(
  fixture: RuntimeFixture,
  world: World,
  _model: ModelProcess,
  cfg: FirstCallConfig,
  say: (s: string) => void,
): Promise<FirstCallFigures> {
  const env = { ...world.env, ...fixture.env };
  const agent = world.definition.name;
  const run = `${fixture.name}-${process.hrtime.bigint()}`;
  const task = (tag: string, delayMs: number) => directive({ reply: tag, delayMs, tag });
  const argsOf = (side: FirstSide, which: "one" | "four", k: number) => {
    const tags = (which === "one" ? [0] : [0, 1, 2, 3]).map((j) => `first-${run}-${side}-${which}-${k}-${j}`);
    const delay = which === "one" ? cfg.oneDelayMs : cfg.fourDelayMs;
    if (side === "subagents") {
      if (which === "one") return { tool: "subagent", args: { agent, task: task(tags[0]!, delay), async: false }, tags };
      const children = tags.map((t, j) => ({ key: `t${j}`, agent, task: task(t, delay), async: false }));
      return { tool: "subagent", args: { workflowScript: `return runs.all(${JSON.stringify(children)});`, async: false }, tags };
    }
    const args =
      which === "one"
        ? { action: "delegate", agent, task: task(tags[0]!, delay) }
        : { action: "delegate", tasks: tags.map((t) => ({ agent, task: task(t, delay) })) };
    return { tool: "shepherd", args, tags };
  };
  const out: FirstCallFigures = {
    tokensPerSec: cfg.tokensPerSec,
    answerMs: { one: cfg.oneDelayMs, four: cfg.fourDelayMs },
    ms: { speculative: { one: [], four: [] }, plain: { one: [], four: [] }, subagents: { one: [], four: [] } },
    argsChars: { speculative: { one: 0, four: 0 }, plain: { one: 0, four: 0 }, subagents: { one: 0, four: 0 } },
  };
  say(`  first call of a new shepherd: delegate (speculative start on / off) vs pi-subagents, arguments streamed at ${cfg.tokensPerSec} tokens/s x${cfg.reps}`);
  try {
    for (let k = 0; k < cfg.reps; k++) {
      for (const which of ["one", "four"] as const) {
        const sides: FirstSide[] = ["speculative", "plain", "subagents"];
        // Rotating which goes first cancels drift within a round.
        for (let i = 0; i < k % 3; i++) sides.push(sides.shift()!);
        for (const side of sides) {
          await setUserSetting(world.agentDir, "speculativeStart", side === "plain" ? false : undefined);
          const a = argsOf(side, which, k);
          out.argsChars[side][which] = JSON.stringify(a.args).length;
          out.ms[side][which].push(await firstCall(env, world.work, a.tool, a.args, a.tags, cfg));
        }
      }
    }
    return out;
  } finally {
    await setUserSetting(world.agentDir, "speculativeStart", undefined);
  }
}

/** A new shepherd (both extensions loaded, as a user of either has), its first call timed from the prompt to its result. */
async function firstCall(
  env: NodeJS.ProcessEnv,
  cwd: string,
  tool: string,
  args: Record<string, unknown>,
  tags: string[],
  cfg: FirstCallConfig,
): Promise<number> {
  const s = RpcShepherd.start({ cwd, env, extension: null, extraArgs: ["-e", subagentsExtension] });
  try {
    // pi answers RPC commands once its start is done.
    await s.command({ type: "get_state" });
    await sleep(cfg.settleMs);
    const end = s.next((e) => e.type === "tool_execution_end" && e.toolName === tool, 180_000);
    const settled = s.next((e) => e.type === "agent_end", 180_000);
    const startAt = epochNow();
    const accepted = await s.command({
      type: "prompt",
      message: directive({ tool: { name: tool, arguments: args }, afterTool: "done", argsTokensPerSec: cfg.tokensPerSec }),
    });
    if (accepted.success !== true) throw new Error(`prompt refused: ${JSON.stringify(accepted)}`);
    const e = (await end) as { isError?: unknown; result?: { content?: { text?: string }[] } };
    const ms = epochNow() - startAt;
    await settled;
    const text = (e.result?.content ?? []).map((c) => c.text ?? "").join("");
    if (e.isError === true || tags.some((t) => !text.includes(t)))
      throw new Error(`${tool}: the first call did not answer as scripted: ${text.slice(0, 1500)}`);
    return ms;
  } finally {
    await s.stop().catch(() => undefined);
  }
}
