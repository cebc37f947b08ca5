/**
 * What one `wait` on a busy herd costs a real pi shepherd in RPC mode: its CPU (utime + stime
 * from /proc) over a window of pure waiting, with the tool's progress updates counted. Not part
 * of `npm run bench`: a quick, repeatable look at the one figure, run by hand.
 *
 *   node --import tsx bench/wait-cpu.ts [--sheep 16] [--window 10] [--runs 3] [--prof <dir>]
 *
 * --prof writes a V8 CPU profile of the shepherd's pi (--cpu-prof) into <dir>.
 */
import { parseArgs } from "node:util";
import { RpcShepherd } from "../test/support/rpc-shepherd.ts";
import { directive } from "../test/support/scripted-model.ts";
import { sleep } from "./lib/clock.ts";
import { procCpu } from "./lib/cpu.ts";
import { startModelProcess } from "./lib/model.ts";
import { tmuxFixture } from "./lib/tmux-fixture.ts";
import { makeWorld } from "./lib/world.ts";

const { values } = parseArgs({
  options: {
    sheep: { type: "string", default: "16" },
    window: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
    prof: { type: "string" },
  },
});
const sheep = Number(values.sheep);
const windowMs = Number(values.window) * 1000;
const runs = Number(values.runs);

const model = await startModelProcess();
const world = await makeWorld(model.baseUrl, "wait-cpu");
const fixture = await tmuxFixture(world.dir, world.env);
const env = { ...world.env, ...fixture.env, ...(values.prof ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${values.prof}` } : {}) };
const rpc = RpcShepherd.start({ cwd: world.work, env });
const results: { cpuPct: number; childPct: number; updates: number; updateBytes: number; multiplexerCalls: number; events: string }[] = [];
const windows: [number, number][] = [];
const countBy = (xs: string[]) => {
  const counts = new Map<string, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ${n}`).join(", ");
};
try {
  const ids: string[] = [];
  for (let i = 0; i < sheep; i++) {
    const r = await rpc.ok({ action: "start", agent: "echo", label: `s${i + 1}` });
    ids.push((r.details.agent as { agentId: string }).agentId);
  }
  const pid = rpc.proc.pid!;
  for (let run = 0; run < runs; run++) {
    const promptIds: string[] = [];
    for (const id of ids) {
      const r = await rpc.ok({ action: "prompt", agentId: id, message: directive({ reply: `done ${run}`, delayMs: windowMs + 5000 }) });
      promptIds.push((r.details.prompt as { promptId: string }).promptId);
    }
    const started = rpc.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd");
    const waiting = rpc.call({ action: "wait", promptIds }, windowMs + 120_000);
    await started;
    await sleep(1500);
    const from = rpc.events.length;
    const calls0 = await fixture.multiplexerCalls();
    // For a tool attached from outside (strace -p, perf) to find the shepherd in its window.
    console.log(`window ${run + 1} opens: shepherd pid ${pid}`);
    const cpu0 = procCpu(pid);
    const t0 = performance.now();
    await sleep(windowMs);
    const cpu1 = procCpu(pid);
    const t1 = performance.now();
    const seen = rpc.events.slice(from);
    const calls1 = await fixture.multiplexerCalls();
    windows.push([t0, t1]);
    const updates = seen.filter((e) => e.type === "tool_execution_update");
    const w = await waiting;
    const done = (w.details.results as { status: string }[]).filter((x) => x.status === "completed").length;
    if (done !== sheep) throw new Error(`wait returned ${done}/${sheep} completed: ${w.text.slice(0, 500)}`);
    const r = {
      cpuPct: ((cpu1.own - cpu0.own) / (t1 - t0)) * 100,
      childPct: ((cpu1.children - cpu0.children) / (t1 - t0)) * 100,
      events: countBy(seen.map((e) => (e.type === "extension_ui_request" ? `ui:${String(e.method)}` : e.type))),
      updates: updates.length,
      updateBytes: updates.reduce((n, e) => n + JSON.stringify(e).length, 0),
      multiplexerCalls: calls1 - calls0,
    };
    results.push(r);
    console.log(
      `run ${run + 1}: ${r.cpuPct.toFixed(2)} % of a core (+ ${r.childPct.toFixed(2)} % in children), ${r.updates} updates (${r.updateBytes} B), ${r.multiplexerCalls} tmux calls in ${((t1 - t0) / 1000).toFixed(1)} s; events: ${r.events}`,
    );
  }
  const sorted = results.map((r) => r.cpuPct).sort((a, b) => a - b);
  console.log(
    `median: ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} % of a core while one wait waits on ${sheep} sheep (load ${(await import("node:os")).loadavg()[0]!.toFixed(1)})`,
  );
} finally {
  // Where the windows lie in a profile: its end is the moment the shepherd stops.
  if (values.prof) console.log(`windows (ms before stop): ${JSON.stringify(windows.map(([a, b]) => [performance.now() - a, performance.now() - b]))}`);
  await rpc.stop().catch(() => undefined);
  await fixture.cleanup();
  await model.close();
  await world.cleanup();
}
