/**
 * Resident memory of a sheep against a bare pi's: every process in the sheep's pane (its root and
 * all that runs below it: on tmux pi alone; on herdr the pane's shell, report-exit.sh and pi),
 * and the bare pi's own process, each read from /proc the same time after it reported ready.
 */
import { readFile } from "node:fs/promises";
import type { Shepherd } from "../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../src/ports/types.ts";
import type { LocalSheepFiles } from "../../src/protocol/local-sheep-files.ts";
import { bareBoot } from "./bare-boot.ts";
import { sleep } from "./clock.ts";
import type { BareMode, RuntimeFixture } from "./runtime-fixture.ts";

export interface MemorySample {
  /** Every process of the sheep's pane, in kB. */
  sheepKb: number;
  /** The bare pi's process, in kB. */
  bareKb: number;
  /** What ran in the sheep's pane: each process's name. */
  sheepProcesses: string[];
}

/** How long after ready both are measured: pi's start-up garbage is collected by then. */
const SETTLE_MS = 2000;

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
}

async function children(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** A process and everything below it, with the name each runs as. */
export async function processTree(root: number): Promise<{ pid: number; name: string }[]> {
  const out: { pid: number; name: string }[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    const argv0 = (await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => "?")).split(/[\0 ]/)[0] ?? "?";
    const name = argv0.slice(argv0.lastIndexOf("/") + 1);
    out.push({ pid, name });
    queue.push(...(await children(pid)));
  }
  return out;
}

export async function treeRssKb(root: number): Promise<{ kb: number; names: string[] }> {
  const tree = await processTree(root);
  const sizes = await Promise.all(tree.map((p) => rssKb(p.pid)));
  return { kb: sizes.reduce((a, b) => a + b, 0), names: tree.map((p) => p.name) };
}

/** One sheep started, measured and closed, then one bare pi booted and measured the same way. */
export async function memorySample(
  shepherd: Shepherd,
  fixture: RuntimeFixture,
  mode: BareMode,
  host: LocalSheepFiles,
  definition: AgentDefinition,
  cwd: string,
): Promise<MemorySample> {
  const sheep = await shepherd.start({ definition, cwd, label: `memory-${Date.now()}` });
  let measured: { kb: number; names: string[] };
  try {
    await sleep(SETTLE_MS);
    measured = await treeRssKb(await fixture.panePid(sheep.paneId));
  } finally {
    await shepherd.close(sheep.agentId);
  }
  let bareKb = 0;
  await bareBoot(mode, host, fixture, definition, cwd, async (pid) => {
    await sleep(SETTLE_MS);
    bareKb = await rssKb(pid);
  });
  return { sheepKb: measured.kb, bareKb, sheepProcesses: measured.names };
}
