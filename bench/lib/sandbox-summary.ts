/** The sandbox bench's samples condensed for the JSON file (bench/lib/sandbox-bench.ts). */
import type { SandboxFigures, SideSeries } from "./sandbox-bench.ts";
import { round, summarize } from "./stats.ts";

export function sandboxSummary(f: SandboxFigures) {
  const side = (s: SideSeries) => ({
    startMs: summarize(s.startMs),
    promptMs: summarize(s.promptMs),
    answerToWaitMs: summarize(s.answerToWaitMs),
    toModelMs: summarize(s.toModelMs),
    requestMs: summarize(s.requestMs),
    busy: s.busy.map((w) => ({ ...w, windowMs: round(w.windowMs), cpuMs: round(w.cpuMs) })),
    waiting: s.waiting.map((w) => ({ ...w, windowMs: round(w.windowMs), cpuMs: round(w.cpuMs) })),
  });
  return {
    firstStartMs: { plain: round(f.firstStartMs.plain), sandboxed: round(f.firstStartMs.sandboxed) },
    plain: side(f.sides.plain),
    sandboxed: side(f.sides.sandboxed),
  };
}
