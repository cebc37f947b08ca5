import type { AgentId } from "../../src/domain/ids.ts";
import type { Shepherd } from "../../src/core/shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";

export interface Overhead {
  sheep: number;
  windowMs: number;
  cpuMs: number;
  childCpuMs: number;
  multiplexerCalls: number;
  idle: { windowMs: number; cpuMs: number; multiplexerCalls: number };
}

/** CPU of this process (the shepherd) and multiplexer processes spawned, over a window of pure waiting. */
export async function overhead(shepherd: Shepherd, fixture: RuntimeFixture, ids: AgentId[], windowMs: number): Promise<Overhead> {
  // Counting reads a file: do it outside the measured span on both ends.
  const begin = async () => {
    const calls = await fixture.multiplexerCalls();
    return { calls, at: performance.now(), cpu: process.cpuUsage(), proc: procCpu() };
  };
  const end = async () => {
    const s = { at: performance.now(), cpu: process.cpuUsage(), proc: procCpu() };
    return { ...s, calls: await fixture.multiplexerCalls() };
  };
  const idle0 = await begin();
  await sleep(2000);
  const idle1 = await end();
  const prompts = [];
  for (const id of ids) prompts.push(await shepherd.prompt(id, directive({ reply: "late", delayMs: windowMs + 3000 })));
  const waiting = shepherd.wait(
    prompts.map((p) => p.promptId),
    { timeoutSec: 120 },
  );
  await sleep(500);
  const a = await begin();
  await sleep(windowMs);
  const b = await end();
  const items = await waiting;
  if (!items.every((i) => i.status === "completed")) throw new Error(`overhead wait: ${JSON.stringify(items)}`);
  const cpuMs = (x: typeof a, y: typeof a) => (y.cpu.user - x.cpu.user + y.cpu.system - x.cpu.system) / 1000;
  return {
    sheep: ids.length,
    windowMs: b.at - a.at,
    cpuMs: cpuMs(a, b),
    childCpuMs: b.proc.children - a.proc.children,
    multiplexerCalls: b.calls - a.calls,
    idle: { windowMs: idle1.at - idle0.at, cpuMs: cpuMs(idle0, idle1), multiplexerCalls: idle1.calls - idle0.calls },
  };
}
