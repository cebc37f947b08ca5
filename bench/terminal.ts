/** The panel's terminal in the bench's table (issue 34): a key's echo in the page, and sixteen open terminals' cost. */
import type { HerdrTerminalFigures } from "./lib/herdr-terminal-bench.ts";
import type { TerminalFigures } from "./lib/terminal-bench.ts";
import type { Got, RowMaker, RuntimeRun } from "./lib/row.ts";
import { median, ms, quantile, round } from "./lib/stats.ts";

const pct = (cpuMs: number, windowMs: number) => round((cpuMs / windowMs) * 100, 2);

/** The terminal's rows: a key's echo in the page, and sixteen open terminals' cost. */
export function terminalRows(row: RowMaker): void {
  const withTerminal = (f: (t: TerminalFigures) => Got) => (r: RuntimeRun) => (r.terminal ? f(r.terminal) : undefined);
  row(
    "panel terminal: key echo in the page (keydown → drawn)",
    "rpc",
    "ms",
    withTerminal((t) => ({ value: round(median(t.echoMs), 1), detail: `n=${t.echoMs.length}, p90 ${ms(quantile(t.echoMs, 0.9))}` })),
    { text: "<= 50 ms median", ok: (v) => v <= 50, runtimes: ["tmux"] },
  );
  row(
    "panel terminal: shepherd CPU, 16 terminals open, idle sheep",
    "rpc",
    "%",
    withTerminal((t) => ({ value: pct(t.cpu.cpuMs, t.cpu.windowMs), detail: `${t.cpu.terminals} streams, ${t.cpu.bytes} bytes in ${ms(t.cpu.windowMs)}` })),
    { text: "<= 2 %", ok: (v) => v <= 2, runtimes: ["tmux"] },
  );
}

/** herdr's terminal is a poll the shepherd runs: its rows are the watches' own, in the bench process. */
export function herdrTerminalRows(row: RowMaker): void {
  const withHerdr = (f: (t: HerdrTerminalFigures) => Got) => (r: RuntimeRun) => (r.herdrTerminal ? f(r.herdrTerminal) : undefined);
  row(
    "herdr terminal: key echo to the sink (sendKeys → changed screen)",
    "core",
    "ms",
    withHerdr((t) => ({
      value: round(median(t.echoMs), 1),
      detail: `n=${t.echoMs.length}${t.failedKeys ? ` (${t.failedKeys} keys failed)` : ""}, p90 ${ms(quantile(t.echoMs, 0.9))}; after the keys were in ${ms(median(t.afterKeysMs))}; one fake herdr call ${ms(median(t.callMs))}`,
    })),
  );
  row(
    "herdr terminal: the watches' CPU, 16 open, idle panes",
    "core",
    "%",
    withHerdr((t) => {
      const w = t.cpu.windows;
      const calls = w.reduce((n, x) => n + (x.herdrCalls ?? 0), 0);
      const secs = w.reduce((n, x) => n + x.windowMs, 0) / 1000;
      return {
        value: median(w.map((x) => pct(x.cpuMs, x.windowMs))),
        detail:
          `${t.cpu.watches} watches${t.ended.length ? ` (${t.ended.length} ended: calls past their deadline)` : ""}, windows ${w.map((x) => pct(x.cpuMs, x.windowMs)).join(" / ")} %, no watch ${pct(t.cpu.baseline.cpuMs, t.cpu.baseline.windowMs)} %; ` +
          `${round(calls / secs, 1)} herdr calls/s; the fake herdr's processes ${median(w.map((x) => pct(x.childrenMs, x.windowMs)))} %`,
      };
    }),
    { text: "<= 2 %", ok: (v) => v <= 2, runtimes: ["herdr"] },
  );
}
