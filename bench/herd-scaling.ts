/**
 * Work the core does for a herd, counted (not timed), at several herd sizes (test/support/herd-work.ts):
 * `node --import tsx bench/herd-scaling.ts [16 64 ...]`. What grows faster than the herd shows as a
 * per-sheep figure that grows with it.
 */
import { herdWork } from "../test/support/herd-work.ts";

const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length ? sizes : [16, 64]) {
  const r = await herdWork(n);
  const per = Object.entries(r).map(([k, v]) => `${k} ${k === "n" ? v : (v / n).toFixed(1)}`);
  console.log(`${n} sheep, per sheep: ${per.slice(1).join(", ")}`);
}
process.exit(0);
