/**
 * Work the core does for a herd, counted (not timed), at several herd sizes (test/support/herd-work.ts),
 * the herd spread over 4 remote hosts behind loopback links (what each link carries counted too):
 * `node --import tsx bench/herd-scaling.ts [16 64 ...]`. What grows faster than the herd shows as a
 * per-sheep figure that grows with it. Then one frame of the herd widget, timed in this process.
 */
import { Shepherd } from "../src/core/shepherd.ts";
import { WidgetRefresh } from "../src/edge/widget-refresh.ts";
import { herdWidgetLines } from "../src/texts/widget.ts";
import { herdWork } from "../test/support/herd-work.ts";
import { MemoryWorld } from "../test/support/memory-world.ts";
import { median } from "./lib/stats.ts";

const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length ? sizes : [16, 64]) {
  for (const hosts of [0, 4]) {
    const { link, herdLiveness: _, herdRequests: __, ...r } = await herdWork(n, { hosts });
    const per = Object.entries(r).map(([k, v]) => `${k} ${k === "n" ? v : (v / n).toFixed(1)}`);
    const carried = link ? `; link lines ${(link.lines / n).toFixed(1)}, bytes ${(link.bytes / n).toFixed(0)}` : "";
    console.log(`${n} sheep${hosts ? ` on ${hosts} hosts` : ""}, per sheep: ${per.slice(1).join(", ")}${carried}`);
  }
}

/**
 * One frame of the herd widget at n sheep, in this process on the in-memory world: its views and
 * lines as LiveText computes them at each draw (herdWidgetLines over WidgetRefresh.views, joined),
 * each sheep with 3 settled prompts and one running. pi-tui's own wrapping of the text is not in it.
 */
async function widgetFrame(n: number): Promise<{ linesMs: number }> {
  const world = new MemoryWorld();
  const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", livenessIntervalMs: 1000 });
  for (let i = 0; i < n; i++) {
    const a = await s.start({ definition: { name: "echo", description: "d", source: "user", path: "/a/echo.md" }, cwd: "/", label: `sheep-${i + 1}` });
    for (let k = 0; k < 3; k++) {
      const p = (await s.prompt(a.agentId, `task ${k}`)).promptId;
      world.answer(a.agentId, p, "done");
      await s.wait([p], { timeoutSec: 5 });
    }
    await s.prompt(a.agentId, "working");
  }
  const refresh = new WidgetRefresh();
  const lines = () => herdWidgetLines(refresh.views(s), Date.now()) ?? [];
  const time = (fn: () => unknown) => {
    const ms: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      fn();
      ms.push(performance.now() - t);
    }
    return median(ms.slice(50));
  };
  const linesMs = time(() => lines().join("\n"));
  await s.dispose();
  return { linesMs };
}

for (const n of sizes.length ? sizes : [16, 64]) {
  const f = await widgetFrame(n);
  console.log(`the herd widget at ${n} sheep: a frame's text ${f.linesMs.toFixed(3)} ms (median of 250)`);
}

/**
 * With --expose-gc: the heap a herd of n holds after its work (each sheep with 3 settled prompts of a
 * 1 KB answer and one running), the core and the in-memory world together: an upper bound of what
 * the core's records cost a sheep.
 */
async function heapWith(n: number): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const world = new MemoryWorld();
  const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", livenessIntervalMs: 1000 });
  for (let i = 0; i < n; i++) {
    const a = await s.start({ definition: { name: "echo", description: "d", source: "user", path: "/a/echo.md" }, cwd: "/", label: `s${i + 1}` });
    for (let k = 0; k < 3; k++) {
      const p = (await s.prompt(a.agentId, `task ${k}`)).promptId;
      world.answer(a.agentId, p, "x".repeat(1024));
      await s.wait([p], { timeoutSec: 5 });
    }
    await s.prompt(a.agentId, "working");
  }
  gc();
  gc();
  const used = process.memoryUsage().heapUsed;
  await s.dispose();
  return used;
}

if ((globalThis as { gc?: () => void }).gc) {
  const none = await heapWith(0);
  const big = await heapWith(64);
  console.log(`heap with 64 sheep - with none: ${((big - none) / 1024 / 64).toFixed(1)} KB a sheep (core and in-memory world)`);
}
process.exit(0);
