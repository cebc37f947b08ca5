/** The panel's terminal in the bench's table (issue 34): a key's echo in the page, and sixteen open terminals' cost. */
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
