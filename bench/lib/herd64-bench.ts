/**
 * A herd of 64 (issue 36): a real pi shepherd over RPC with 64 real pi sheep in real tmux panes on
 * the scripted model. What a sheep more costs the shepherd: one wait on 64 busy sheep (CPU and
 * multiplexer processes), the herd tail after the last answer at 1 / 16 / 64, `herd` and
 * `GET /api/v1/sheep` at 64, the shepherd's memory at 64 against 0, and 64 sheep started at once
 * (a delegation of 64 tasks with maxParallel and maxTasks raised to 64, then 64 starts in one turn).
 */
import { timedSheepList } from "./panel-on.ts";
import { readFile } from "node:fs/promises";
import { freemem, totalmem } from "node:os";
import { join } from "node:path";
import { sheepDir } from "../../src/protocol/layout.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import { untilGone } from "./files.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { median } from "./stats.ts";
import { timedCall } from "./tool-call.ts";
import { setUserSetting } from "./warm-pool.ts";
import type { World } from "./world.ts";

export interface Herd64Config {
  sheep: number;
  tailSizes: number[];
  tailRounds: number;
  tailDelayMs: number;
  cpuWindowMs: number;
  listRequests: number;
  herdCalls: number;
}

export interface Herd64Figures {
  sheep: number;
  /** The delegation of `sheep` tasks (each answered at once), whole tool call; and `sheep` starts in one turn, first start to last end. */
  delegateAllMs: number;
  startAllMs: number;
  /** The shepherd's VmRSS with no sheep (after a first call) and with the herd live, kB. */
  shepherdKb: { none: number; herd: number };
  /** Every sheep's pi, VmRSS summed, kB; and what the machine had. */
  sheepKb: number;
  machine: { totalKb: number; freeKb: number };
  tail: { n: number; tailMs: number }[];
  herdMs: number[];
  /** One read-only multiplexer process (tmux list-panes), run by the bench beside the herd calls: the part of herd no shepherd can skip. */
  multiplexerMs: number[];
  /** Multiplexer processes the shepherd ran for all the herd calls together. */
  herdMultiplexerCalls: number;
  /** The shepherd's VmRSS 2 s after closing every sheep, kB: what stays of the conversation that drove them. */
  closedKb: number;
  listMs: number[];
  cpu: { windowMs: number; cpuMs: number; multiplexerCalls: number };
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
}

export async function runHerd64(
  fixture: RuntimeFixture,
  world: World,
  model: ModelProcess,
  cfg: Herd64Config,
  say: (s: string) => void,
): Promise<Herd64Figures> {
  const env = { ...world.env, ...fixture.env };
  const agent = world.definition.name;
  await setUserSetting(world.agentDir, "maxParallel", cfg.sheep);
  await setUserSetting(world.agentDir, "maxTasks", cfg.sheep);
  // No pool: every sheep counted is one of the herd, and the delegation's sheep close after it.
  await setUserSetting(world.agentDir, "warmMemory", 0);
  const rpc = RpcShepherd.start({ cwd: world.work, env, extension: null });
  const pids: number[] = [];
  const call = (args: Record<string, unknown>, timeoutMs = 300_000) => timedCall(rpc, "shepherd", args, timeoutMs);
  try {
    await call({ action: "herd" });
    await sleep(2000);
    const noneKb = await rssKb(rpc.proc.pid!);

    say(`  herd64: a delegation of ${cfg.sheep} tasks at once (maxParallel ${cfg.sheep})`);
    const tasks = Array.from({ length: cfg.sheep }, (_, i) => ({ agent, task: directive({ reply: `d${i}` }) }));
    const d = await call({ action: "delegate", tasks });
    const delegateAllMs = d.ms;

    say(`  herd64: ${cfg.sheep} starts in one turn`);
    const t0 = performance.now();
    const starts = await rpc.callParallel(
      Array.from({ length: cfg.sheep }, (_, i) => ({ action: "start", agent, label: `h${i + 1}` })),
      { timeoutMs: 600_000 },
    );
    const startAllMs = performance.now() - t0;
    const bad = starts.find((s) => s.isError);
    if (bad) throw new Error(`herd64 start: ${bad.text}`);
    const ids = starts.map((s) => (s.details.agent as { agentId: string }).agentId);
    for (const id of ids) pids.push((JSON.parse(await readFile(join(sheepDir(world.agentDir, id), "status.json"), "utf8")) as { pid: number }).pid);
    const promptId = async (agentId: string, message: string) =>
      ((await call({ action: "prompt", agentId, message })).outcome.details.prompt as { promptId: string }).promptId;
    // Every sheep's first model call loads more of pi: not part of any figure.
    const warm: string[] = [];
    for (const [i, id] of ids.entries()) warm.push(await promptId(id, directive({ reply: `w${i}` })));
    await call({ action: "wait", promptIds: warm });
    await sleep(2000);
    const herdKb = await rssKb(rpc.proc.pid!);
    let sheepKb = 0;
    for (const pid of pids) sheepKb += await rssKb(pid);

    say(`  herd64: herd tail at ${cfg.tailSizes.join("/")} x${cfg.tailRounds}`);
    const tail: Herd64Figures["tail"] = [];
    for (const n of cfg.tailSizes) {
      for (let r = 0; r < cfg.tailRounds; r++) {
        const tags = ids.slice(0, n).map((_, i) => `t${n}-${r}-${i}`);
        const sent: string[] = [];
        for (const [i, id] of ids.slice(0, n).entries()) sent.push(await promptId(id, directive({ reply: tags[i]!, delayMs: cfg.tailDelayMs, tag: tags[i]! })));
        const w = await call({ action: "wait", promptIds: sent });
        const items = w.outcome.details.results as { status: string }[];
        if (!items.every((it) => it.status === "completed")) throw new Error(`herd64 tail wait: ${w.outcome.text.slice(0, 300)}`);
        const last = Math.max(...(await Promise.all(tags.map((t) => model.entry(t)))).map((e) => e.lastByteAt!));
        tail.push({ n, tailMs: w.endAt - last });
      }
    }

    say(`  herd64: herd x${cfg.herdCalls} and GET /api/v1/sheep x${cfg.listRequests} at ${cfg.sheep} sheep`);
    // The sheep's pis finish their turns' writing and drawing before the herd is asked about.
    await sleep(3000);
    const herdMs: number[] = [];
    const multiplexerMs: number[] = [];
    const callsBefore = await fixture.multiplexerCalls();
    for (let i = 0; i < cfg.herdCalls; i++) {
      const m = performance.now();
      await fixture.probeCall();
      multiplexerMs.push(performance.now() - m);
      const h = await call({ action: "herd" });
      if ((h.outcome.details.agents as unknown[] | undefined)?.length !== cfg.sheep) throw new Error(`herd64 herd: ${h.outcome.text.slice(0, 300)}`);
      herdMs.push(h.ms);
    }
    // The bench's own list-panes run the real binary, not the counting wrapper.
    const herdMultiplexerCalls = (await fixture.multiplexerCalls()) - callsBefore;
    const listMs = await timedSheepList(rpc, cfg.sheep, cfg.listRequests);

    say(`  herd64: the shepherd's CPU while one wait holds ${cfg.sheep} busy sheep (${cfg.cpuWindowMs / 1000} s window)`);
    const busyMs = cfg.cpuWindowMs + 6000 + ids.length * 100;
    const busy: string[] = [];
    for (const id of ids) busy.push(await promptId(id, directive({ reply: "late", delayMs: busyMs })));
    const started = rpc.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", 60_000);
    const waiting = call({ action: "wait", promptIds: busy });
    await started;
    await sleep(1000);
    const pid = rpc.proc.pid!;
    const a = { at: performance.now(), cpu: procCpu(pid).own, calls: await fixture.multiplexerCalls() };
    await sleep(cfg.cpuWindowMs);
    const b = { at: performance.now(), cpu: procCpu(pid).own, calls: await fixture.multiplexerCalls() };
    const w = await waiting;
    if (!(w.outcome.details.results as { status: string }[]).every((it) => it.status === "completed"))
      throw new Error(`herd64 cpu wait: ${w.outcome.text.slice(0, 300)}`);
    say(`  herd64: the shepherd's memory after closing the ${cfg.sheep}`);
    const closed = await rpc.callParallel(
      ids.map((agentId) => ({ action: "close", agentId })),
      { timeoutMs: 300_000 },
    );
    if (closed.some((c) => c.isError)) throw new Error(`herd64 close: ${closed.find((c) => c.isError)?.text}`);
    await Promise.all(pids.map((p) => untilGone(p)));
    await sleep(2000);
    const closedKb = await rssKb(rpc.proc.pid!);
    return {
      sheep: cfg.sheep,
      delegateAllMs,
      startAllMs,
      shepherdKb: { none: noneKb, herd: herdKb },
      sheepKb,
      machine: { totalKb: Math.round(totalmem() / 1024), freeKb: Math.round(freemem() / 1024) },
      tail,
      herdMs,
      multiplexerMs,
      herdMultiplexerCalls,
      closedKb,
      listMs,
      cpu: { windowMs: b.at - a.at, cpuMs: b.cpu - a.cpu, multiplexerCalls: b.calls - a.calls },
    };
  } finally {
    // closeOnExit: the shepherd closes its sheep as it quits.
    await rpc.stop().catch(() => undefined);
    await Promise.all(pids.map((p) => untilGone(p)));
  }
}

/** The part's own table, against the targets. */
export function herd64Table(f: Herd64Figures): string {
  const n = f.sheep;
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const tails = [...new Set(f.tail.map((t) => t.n))].map((k) => `${k}: ${ms(median(f.tail.filter((t) => t.n === k).map((t) => t.tailMs)))}`);
  const growthMb = (f.shepherdKb.herd - f.shepherdKb.none) / 1024 / n;
  const cpuPct = (100 * f.cpu.cpuMs) / f.cpu.windowMs;
  const rows = [
    [
      `one wait on ${n} busy sheep: shepherd CPU`,
      `${cpuPct.toFixed(2)} % of a core (${f.cpu.multiplexerCalls} multiplexer processes in ${(f.cpu.windowMs / 1000).toFixed(1)} s: ${(f.cpu.multiplexerCalls / n / (f.cpu.windowMs / 1000)).toFixed(4)} per sheep per s)`,
      "≤ 1 %",
    ],
    ["herd tail after the last answer", tails.join(" / "), `≤ 60 ms at ${n}`],
    [
      `herd (RPC tool call) at ${n} sheep`,
      `${ms(median(f.herdMs))} median, ${(f.herdMultiplexerCalls / f.herdMs.length).toFixed(1)} multiplexer processes a call (one tmux list-panes beside it: ${ms(median(f.multiplexerMs))})`,
      "≤ 20 ms",
    ],
    [`GET /api/v1/sheep at ${n} real sheep`, `${ms(median(f.listMs))} median`, "≤ 20 ms"],
    [
      `shepherd memory at ${n} sheep ÷ at 0`,
      `${(f.shepherdKb.herd / f.shepherdKb.none).toFixed(2)} (${(f.shepherdKb.herd / 1024).toFixed(0)} / ${(f.shepherdKb.none / 1024).toFixed(0)} MB): ${growthMb.toFixed(2)} MB a sheep; ${(f.closedKb / 1024).toFixed(0)} MB after closing them all`,
      "≤ 1 MB a sheep",
    ],
    [
      `${n} sheep started at once`,
      `delegate of ${n} tasks ${(f.delegateAllMs / 1000).toFixed(1)} s; ${n} starts in one turn ${(f.startAllMs / 1000).toFixed(1)} s; the sheep hold ${(f.sheepKb / 1024 / 1024).toFixed(1)} GB (${(f.sheepKb / 1024 / n).toFixed(0)} MB each) of ${(f.machine.totalKb / 1024 / 1024).toFixed(1)} GB`,
      "printed",
    ],
  ];
  return rows.map((r) => `| ${r.join(" | ")} |`).join("\n");
}
