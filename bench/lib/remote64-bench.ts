/**
 * A herd of 64 across remote hosts (issue 36): 4 × 16 real pi sheep, 16 on each of 4 of the test's
 * remote hosts (test/support/remote-host.ts: a network namespace each, a private sshd each), driven
 * by a real pi shepherd over RPC here on the scripted model. What the issue asks of 64 local sheep,
 * asked of 64 remote ones, with 16 on one host beside it: one wait on the busy sheep (the shepherd's
 * CPU and its ssh processes'), the herd tail after the last answer, `herd` and `GET /api/v1/sheep`,
 * the shepherd's memory, and the 64 started in one turn.
 */
import { timedSheepList } from "./panel-on.ts";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sheepDir } from "../../src/protocol/layout.ts";
import { type RemoteHost, startRemoteHost } from "../../test/support/remote-host.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { median } from "./stats.ts";
import { timedCall } from "./tool-call.ts";
import type { World } from "./world.ts";

export interface Remote64Config {
  hosts: number;
  perHost: number;
  /** Herd tail sizes: the first `perHost` are one host's sheep, more spread over every host. */
  tailSizes: number[];
  tailDelayMs: number;
  cpuWindowMs: number;
  listRequests: number;
  herdCalls: number;
}

export interface CpuWindow {
  sheep: number;
  hosts: number;
  windowMs: number;
  shepherdCpuMs: number;
  sshCpuMs: number;
}

export interface Remote64Figures {
  hosts: number;
  perHost: number;
  startAllMs: number;
  shepherdKb: { none: number; herd: number; closed: number };
  /** The remote sheep's pis, VmRSS summed, kB. */
  sheepKb: number;
  tail: { n: number; hosts: number; tailMs: number }[];
  herdMs: number[];
  listMs: number[];
  /** One host's sheep busy, then every host's. */
  cpu: CpuWindow[];
  /** ssh processes here while every host's sheep worked (a ControlMaster and a channel a host). */
  sshProcesses: number;
  loadavg: { start: number[]; end: number[] };
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
}

/** CPU (user+system, ms) of a process, 0 once it is gone. */
function safeCpu(pid: number): number {
  try {
    return procCpu(pid).own;
  } catch {
    return 0;
  }
}

async function loadavg(): Promise<number[]> {
  return (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).map(Number);
}

export async function runRemote64(
  fixture: RuntimeFixture,
  world: World,
  model: ModelProcess,
  cfg: Remote64Config,
  say: (s: string) => void,
): Promise<Remote64Figures> {
  const port = Number(new URL(model.baseUrl).port);
  const settingsPath = join(world.agentDir, "pi-shepherd", "settings.json");
  const before = await readFile(settingsPath, "utf8").catch(() => undefined);
  const remotes: RemoteHost[] = [];
  let rpc: RpcShepherd | undefined;
  const n = cfg.hosts * cfg.perHost;
  const load0 = await loadavg();
  try {
    say(`  remote64: ${cfg.hosts} remote hosts (a namespace and an sshd each)`);
    // One after another: each picks a network no other uses.
    for (let h = 0; h < cfg.hosts; h++) remotes.push(await startRemoteHost({ modelPort: port, alias: `far${h + 1}` }));
    const names = remotes.map((_, h) => `far${h + 1}`);
    const settings = before ? (JSON.parse(before) as Record<string, unknown>) : {};
    await mkdir(join(world.agentDir, "pi-shepherd"), { recursive: true, mode: 0o700 });
    const hosts = Object.fromEntries(remotes.map((r, h) => [names[h]!, r.hostSettings()]));
    // No pool: every sheep counted is one of the herd.
    await writeFile(settingsPath, JSON.stringify({ ...settings, hosts, maxParallel: n, maxTasks: n, warmMemory: 0 }), { mode: 0o600 });
    const shepherd = RpcShepherd.start({ cwd: world.work, env: { ...world.env, ...fixture.env }, extension: null });
    rpc = shepherd;
    const call = (args: Record<string, unknown>, timeoutMs = 300_000) => timedCall(shepherd, "shepherd", args, timeoutMs);
    await call({ action: "herd" });
    await sleep(2000);
    const noneKb = await rssKb(shepherd.proc.pid!);

    say(`  remote64: ${n} starts in one turn, ${cfg.perHost} on each host`);
    const agent = world.definition.name;
    const t0 = performance.now();
    const starts = await shepherd.callParallel(
      Array.from({ length: n }, (_, i) => ({ action: "start", agent, host: names[i % cfg.hosts], label: `r${i + 1}` })),
      { timeoutMs: 900_000 },
    );
    const startAllMs = performance.now() - t0;
    const bad = starts.find((s) => s.isError);
    if (bad) throw new Error(`remote64 start: ${bad.text}`);
    // byHost[h]: the sheep on host h, in start order.
    const byHost: string[][] = remotes.map(() => []);
    for (const [i, s] of starts.entries()) byHost[i % cfg.hosts]!.push((s.details.agent as { agentId: string }).agentId);
    const hostOf = new Map(byHost.flatMap((ids, h) => ids.map((id) => [id, h] as const)));
    // Round robin over the hosts: any first k spreads over as many hosts as it can.
    const spread = Array.from({ length: cfg.perHost }, (_, k) => byHost.map((ids) => ids[k]!)).flat();
    const promptId = async (agentId: string, message: string) =>
      ((await call({ action: "prompt", agentId, message })).outcome.details.prompt as { promptId: string }).promptId;
    const waitAll = async (ids: string[], what: string) => {
      const w = await call({ action: "wait", promptIds: ids }, 600_000);
      const items = w.outcome.details.results as { status: string }[];
      if (!items.every((it) => it.status === "completed")) throw new Error(`remote64 ${what}: ${w.outcome.text.slice(0, 300)}`);
      return w;
    };
    // Every sheep's first model call loads more of pi: not part of any figure.
    const warm: string[] = [];
    for (const [i, id] of spread.entries()) warm.push(await promptId(id, directive({ reply: `rw${i}` })));
    await waitAll(warm, "warm wait");
    await sleep(2000);
    const herdKb = await rssKb(shepherd.proc.pid!);
    let sheepKb = 0;
    for (const id of spread) {
      const r = remotes[hostOf.get(id)!]!;
      const status = JSON.parse(await readFile(r.hostPath(join(sheepDir(r.agentDir, id), "status.json")), "utf8")) as { pid: number };
      // The namespace shares this machine's pid space: its pis are read here by their pids.
      sheepKb += await rssKb(status.pid);
    }

    const tail: Remote64Figures["tail"] = [];
    say(`  remote64: herd tail at ${cfg.tailSizes.join("/")}`);
    for (const size of cfg.tailSizes) {
      const ids = size <= cfg.perHost ? byHost[0]!.slice(0, size) : spread.slice(0, size);
      const tags = ids.map((_, i) => `rt${size}-${i}`);
      const sent: string[] = [];
      for (const [i, id] of ids.entries()) sent.push(await promptId(id, directive({ reply: tags[i]!, delayMs: cfg.tailDelayMs, tag: tags[i]! })));
      const w = await waitAll(sent, "tail wait");
      const last = Math.max(...(await Promise.all(tags.map((t) => model.entry(t)))).map((e) => e.lastByteAt!));
      tail.push({ n: size, hosts: new Set(ids.map((id) => hostOf.get(id))).size, tailMs: w.endAt - last });
    }

    say(`  remote64: herd x${cfg.herdCalls} and GET /api/v1/sheep x${cfg.listRequests} at ${n} remote sheep`);
    await sleep(3000);
    const herdMs: number[] = [];
    for (let i = 0; i < cfg.herdCalls; i++) {
      const h = await call({ action: "herd" });
      if ((h.outcome.details.agents as unknown[] | undefined)?.length !== n) throw new Error(`remote64 herd: ${h.outcome.text.slice(0, 300)}`);
      herdMs.push(h.ms);
    }
    const listMs = await timedSheepList(shepherd, n, cfg.listRequests);

    const cpu: CpuWindow[] = [];
    let sshProcesses = 0;
    const window = async (ids: string[]) => {
      const used = new Set(ids.map((id) => hostOf.get(id)!));
      say(`  remote64: the shepherd's CPU while one wait holds ${ids.length} busy sheep on ${used.size} host(s) (${cfg.cpuWindowMs / 1000} s window)`);
      const busyMs = cfg.cpuWindowMs + 6000 + ids.length * 150;
      const busy: string[] = [];
      for (const id of ids) busy.push(await promptId(id, directive({ reply: "late", delayMs: busyMs })));
      const started = shepherd.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", 60_000);
      const waiting = waitAll(busy, "cpu wait");
      await started;
      await sleep(1000);
      const pid = shepherd.proc.pid!;
      const ssh = () => new Map(remotes.flatMap((r) => r.localSsh()).map((p) => [p, safeCpu(p)] as const));
      const a = { at: performance.now(), cpu: procCpu(pid).own, ssh: ssh() };
      await sleep(cfg.cpuWindowMs);
      const b = { at: performance.now(), cpu: procCpu(pid).own, ssh: ssh() };
      sshProcesses = Math.max(sshProcesses, b.ssh.size);
      let sshMs = 0;
      for (const [p, c] of b.ssh) sshMs += c - (a.ssh.get(p) ?? 0);
      await waiting;
      cpu.push({ sheep: ids.length, hosts: used.size, windowMs: b.at - a.at, shepherdCpuMs: b.cpu - a.cpu, sshCpuMs: sshMs });
    };
    await window(byHost[0]!);
    await window(spread);

    say(`  remote64: the shepherd's memory after closing the ${n}`);
    const closed = await shepherd.callParallel(
      spread.map((agentId) => ({ action: "close", agentId })),
      { timeoutMs: 600_000 },
    );
    if (closed.some((c) => c.isError)) throw new Error(`remote64 close: ${closed.find((c) => c.isError)?.text}`);
    await sleep(2000);
    const closedKb = await rssKb(shepherd.proc.pid!);
    return {
      hosts: cfg.hosts,
      perHost: cfg.perHost,
      startAllMs,
      shepherdKb: { none: noneKb, herd: herdKb, closed: closedKb },
      sheepKb,
      tail,
      herdMs,
      listMs,
      cpu,
      sshProcesses,
      loadavg: { start: load0, end: await loadavg() },
    };
  } finally {
    // closeOnExit: the shepherd closes its sheep as it quits; then each host ends by its handle.
    await rpc?.stop().catch(() => undefined);
    for (const r of remotes.reverse()) await r.end().catch(() => undefined);
    // The other parts run on the world's settings as they were.
    if (before === undefined) await rm(settingsPath, { force: true });
    else await writeFile(settingsPath, before, { mode: 0o600 });
  }
}

/** The part's own table, against the issue's targets for 64 sheep. */
export function remote64Table(f: Remote64Figures): string {
  const n = f.hosts * f.perHost;
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const pct = (w: CpuWindow, cpuMs: number) => `${((100 * cpuMs) / w.windowMs).toFixed(2)} %`;
  const cpuText = f.cpu.map((w) => `${w.sheep} on ${w.hosts} host(s): shepherd ${pct(w, w.shepherdCpuMs)}, its ssh ${pct(w, w.sshCpuMs)}`).join("; ");
  const growthMb = (f.shepherdKb.herd - f.shepherdKb.none) / 1024 / n;
  const rows = [
    [`one wait on busy remote sheep: CPU of a core`, `${cpuText} (${f.sshProcesses} ssh processes)`, "≤ 1 % (shepherd)"],
    ["herd tail after the last answer", f.tail.map((t) => `${t.n} on ${t.hosts}: ${ms(t.tailMs)}`).join(" / "), `≤ 60 ms at ${n}`],
    [`herd (RPC tool call) at ${n} remote sheep`, `${ms(median(f.herdMs))} median`, "≤ 20 ms"],
    [`GET /api/v1/sheep at ${n} remote sheep`, `${ms(median(f.listMs))} median`, "≤ 20 ms"],
    [
      `shepherd memory at ${n} remote sheep ÷ at 0`,
      `${(f.shepherdKb.herd / f.shepherdKb.none).toFixed(2)} (${(f.shepherdKb.herd / 1024).toFixed(0)} / ${(f.shepherdKb.none / 1024).toFixed(0)} MB): ${growthMb.toFixed(2)} MB a sheep; ${(f.shepherdKb.closed / 1024).toFixed(0)} MB after closing them all`,
      "≤ 1 MB a sheep",
    ],
    [
      `${n} remote sheep started in one turn`,
      `${(f.startAllMs / 1000).toFixed(1)} s; their pis hold ${(f.sheepKb / 1024 / 1024).toFixed(1)} GB (${(f.sheepKb / 1024 / n).toFixed(0)} MB each)`,
      "printed",
    ],
  ];
  return `load average ${f.loadavg.start.join(" ")} at the start, ${f.loadavg.end.join(" ")} at the end\n| figure | value | target |\n|---|---|---|\n${rows.map((r) => `| ${r.join(" | ")} |`).join("\n")}`;
}
