import { readFileSync } from "node:fs";

/** utime, stime, cutime, cstime of a process from /proc, in milliseconds (Linux only). */
export function procCpu(pid: number | "self" = "self"): { own: number; children: number } {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; the name itself may hold spaces.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const tick = 1000 / CLK_TCK;
  const n = (i: number) => Number(fields[i - 3]) * tick;
  return { own: n(14) + n(15), children: n(16) + n(17) };
}

/** Clock ticks per second; 100 on every Linux the bench is meant for. */
const CLK_TCK = 100;
