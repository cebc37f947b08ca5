/**
 * The rows of sandboxed sheep against unsandboxed ones (issue 33's Speed), each figure of both sides
 * from the same run (bench/lib/sandbox-bench.ts).
 */
import type { RowMaker } from "./lib/row.ts";
import type { SandboxFigures } from "./lib/sandbox-bench.ts";
import { median, ms, round } from "./lib/stats.ts";

type Series = keyof Omit<SandboxFigures["sides"]["plain"], "busy" | "waiting">;
type Side = "plain" | "sandboxed";

export function sandboxRows(row: RowMaker): void {
  const both = (f: SandboxFigures, k: Series) => [median(f.sides.sandboxed[k]), median(f.sides.plain[k])] as const;
  const n = (f: SandboxFigures, k: Series) => `n ${f.sides.sandboxed[k].length}/${f.sides.plain[k].length}`;
  const delta = (k: Series) => (r: { sandbox?: SandboxFigures }) => {
    const f = r.sandbox;
    if (!f) return undefined;
    const [s, p] = both(f, k);
    return { value: round(s - p, 1), detail: `sandboxed ${ms(s)} / plain ${ms(p)}, ${n(f, k)}` };
  };
  row(
    "sandboxed sheep: start tool call, cold, sandboxed / plain",
    "rpc",
    "x",
    (r) => {
      const f = r.sandbox;
      if (!f) return undefined;
      const [s, p] = both(f, "startMs");
      return {
        value: round(s / p, 3),
        detail: `${ms(s)} / ${ms(p)}, ${n(f, "startMs")}; first of each ${ms(f.firstStartMs.sandboxed)} / ${ms(f.firstStartMs.plain)}`,
      };
    },
    { text: "<= 1.10", ok: (v) => v <= 1.1 },
  );
  row("sandboxed sheep: prompt tool call, sandboxed - plain", "rpc", "ms", delta("promptMs"), { text: "<= +5 ms", ok: (v) => v <= 5 });
  row("sandboxed sheep: answer -> wait, sandboxed - plain", "rpc", "ms", delta("answerToWaitMs"), { text: "<= +5 ms", ok: (v) => v <= 5 });
  row("sandboxed sheep: a model request from inside the sheep, via the proxy - direct", "rpc", "ms", delta("requestMs"), {
    text: "<= +5 ms",
    ok: (v) => v <= 5,
  });
  row("sandboxed sheep: prompt returned -> its pi's request at the model, sandboxed - plain (reference)", "rpc", "ms", delta("toModelMs"));
  const windows = (f: SandboxFigures, side: Side) => f.sides[side].busy;
  const cpuRow = (words: string, which: "busy" | "waiting", what: (w: SandboxFigures["sides"]["plain"]["busy"][number]) => string) =>
    row(
      `sandboxed sheep: CPU while 16 sandboxed sheep work, ${words} (shepherd process, the proxy in it)`,
      "rpc",
      "% core",
      (r) => {
        const f = r.sandbox;
        if (!f?.sides.sandboxed[which].length) return undefined;
        const pct = (side: Side) => median(f.sides[side][which].map((w) => (w.cpuMs / w.windowMs) * 100));
        const w = f.sides.sandboxed[which][0]!;
        return {
          value: round(pct("sandboxed"), 2),
          detail: `plain ${round(pct("plain"), 2)} %; ${w.sheep} sheep ${what(w)}, n ${f.sides.sandboxed[which].length}/${f.sides.plain[which].length}`,
        };
      },
      { text: "<= 1 %", ok: (v) => v <= 1 },
    );
  cpuRow("waiting for their answers", "waiting", (w) => `waiting, ${ms(w.windowMs)} windows`);
  cpuRow("answers streaming", "busy", (w) => `streaming (${w.chunks} chunks a ${ms(w.windowMs)} window)`);
  row(
    "sandboxed sheep: the proxy's memory, shepherd RSS with 16 working sandboxed sheep - with 16 plain",
    "rpc",
    "MB",
    (r) => {
      const f = r.sandbox;
      if (!f) return undefined;
      const rss = (side: Side) => median(windows(f, side).map((w) => w.rssKiB)) / 1024;
      const each = (side: Side) =>
        windows(f, side)
          .map((w) => round(w.rssKiB / 1024, 1))
          .join(", ");
      return { value: round(rss("sandboxed") - rss("plain"), 1), detail: `sandboxed ${each("sandboxed")} / plain ${each("plain")} MB, in window order` };
    },
    { text: "<= 30 MB", ok: (v) => v <= 30 },
  );
}
