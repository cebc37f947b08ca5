import { performance } from "node:perf_hooks";

/** Wall-clock milliseconds with sub-millisecond precision, comparable with Date.now() in other processes. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
