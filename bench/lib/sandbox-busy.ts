/**
 * One window of 16 working sheep for the sandbox bench, one wait holding them all: streaming, each
 * sheep's answer comes in small chunks for longer than the window (a sandboxed sheep's through its
 * tunnel in the shepherd's egress proxy); waiting, it comes after the window, as the other benches'
 * busy sheep (the tunnels open and quiet). Over the window: the shepherd process's CPU (the proxy
 * runs in it), and its VmRSS at the end, every tunnel still open.
 */
import { readFile } from "node:fs/promises";
import type { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import type { ModelProcess } from "./model.ts";
import type { TimedCall } from "./tool-call.ts";

export interface BusyWindow {
  sheep: number;
  windowMs: number;
  cpuMs: number;
  rssKiB: number;
  /** Chunks the model streamed to these sheep during the window (0: they waited). */
  chunks: number;
}

type Call = (args: Record<string, unknown>, timeoutMs?: number) => Promise<TimedCall>;

const CHUNK_GAP_MS = 250;

export async function busyWindow(
  shepherd: RpcShepherd,
  call: Call,
  model: ModelProcess,
  ids: string[],
  tag: string,
  windowMs: number,
  stream: boolean,
): Promise<BusyWindow> {
  const streamMs = windowMs + 6000;
  const chunks = stream ? Math.ceil(streamMs / CHUNK_GAP_MS) : 1;
  const reply = "w".repeat(chunks * 4);
  const tags = ids.map((_, i) => `${tag}-${i}`);
  const promptIds: string[] = [];
  for (const [i, id] of ids.entries()) {
    const p = await call({
      action: "prompt",
      agentId: id,
      message: directive(stream ? { reply, chunks, chunkDelayMs: CHUNK_GAP_MS, tag: tags[i]! } : { reply, delayMs: streamMs, tag: tags[i]! }),
    });
    promptIds.push((p.outcome.details.prompt as { promptId: string }).promptId);
  }
  const started = shepherd.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", 60_000);
  const waiting = call({ action: "wait", promptIds }, 240_000);
  await started;
  // The window opens once every sheep's answer is streaming.
  for (let k = 0; ; k++) {
    const log = await model.log();
    if (tags.every((t) => log.some((l) => l.tag === t && (!stream || l.firstByteAt !== undefined)))) break;
    if (k > 600) throw new Error(`sandbox bench: not every sheep reached the model (${tag})`);
    await sleep(50);
  }
  await sleep(500);
  const pid = shepherd.proc.pid!;
  const a = { at: performance.now(), cpu: procCpu(pid).own };
  await sleep(windowMs);
  const b = { at: performance.now(), cpu: procCpu(pid).own };
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  const w = await waiting;
  const items = w.outcome.details.results as { status: string; text?: string }[];
  if (!items.every((i) => i.status === "completed" && i.text === reply)) throw new Error(`sandbox bench busy wait: ${JSON.stringify(items).slice(0, 500)}`);
  const windowChunks = stream ? Math.round(((b.at - a.at) / CHUNK_GAP_MS) * ids.length) : 0;
  return { sheep: ids.length, windowMs: b.at - a.at, cpuMs: b.cpu - a.cpu, rssKiB, chunks: windowChunks };
}
