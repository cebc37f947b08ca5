/**
 * Work the core does for a herd, counted (not timed), at several herd sizes (test/support/herd-work.ts):
 * `node --import tsx bench/herd-scaling.ts [16 64 ...]`. What grows faster than the herd shows as a
 * per-sheep figure that grows with it.
 */
import { Shepherd } from "../src/core/shepherd.ts";
import { herdWork } from "../test/support/herd-work.ts";
import { MemoryWorld } from "../test/support/memory-world.ts";

const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length ? sizes : [16, 64]) {
  const r = await herdWork(n);
  const per = Object.entries(r).map(([k, v]) => `${k} ${k === "n" ? v : (v / n).toFixed(1)}`);
  console.log(`${n} sheep, per sheep: ${per.slice(1).join(", ")}`);
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
