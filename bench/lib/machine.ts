import { execa } from "execa";
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../../test/support/rpc-shepherd.ts";

export interface Machine {
  nproc: number;
  cpuModel: string;
  memGiB: number;
  node: string;
  tmux: string;
  pi: string;
  loadavg: number[];
}

/** Where the figures came from; load average shows whether something else was running. */
export async function describeMachine(): Promise<Machine> {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const pi = JSON.parse(readFileSync(join(repoRoot, "node_modules", "@earendil-works", "pi-coding-agent", "package.json"), "utf8")) as { version: string };
  const tmux = await execa("tmux", ["-V"], { reject: false });
  return {
    nproc: availableParallelism(),
    cpuModel: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown",
    memGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    tmux: String(tmux.stdout).trim() || "unknown",
    pi: pi.version,
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}
