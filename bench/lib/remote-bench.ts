/**
 * Figures of sheep on another machine against the same figures local, in the same run (issue 24's
 * Speed): a real pi shepherd over RPC whose user settings name the test's remote host
 * (test/support/remote-host.ts: a network namespace on a veth pair, a private sshd), real pi sheep
 * on both sides, the same scripted model. Cold starts, prompts and answer→wait alternate local
 * and remote, so drift falls on both; then one wait on busy remote sheep, its CPU (the shepherd
 * and its ssh processes here) over a window, and the ssh connections the host holds.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type RemoteHost, startRemoteHost } from "../../test/support/remote-host.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { timedCall } from "./tool-call.ts";
import type { World } from "./world.ts";

export interface RemoteConfig {
  /** Cold starts on each side, alternating; the first on the host (connect, deploy) is kept apart. */
  starts: number;
  prompts: number;
  answerDelayMs: number;
  /** Remote sheep busy during the overhead window, all in one wait. */
  busySheep: number;
  overheadWindowMs: number;
}

export interface RemoteFigures {
  /** The first start on the host: ssh's connection, the agent's deploy and start, then the sheep. */
  firstStartMs: number;
  localStartMs: number[];
  remoteStartMs: number[];
  localPromptMs: number[];
  remotePromptMs: number[];
  localAnswerToWaitMs: number[];
  remoteAnswerToWaitMs: number[];
  overhead: { sheep: number; windowMs: number; shepherdCpuMs: number; sshCpuMs: number };
  /** Connections logged in to the host's sshd while the busy sheep worked. */
  connections: number;
}

const HOST = "box";

export async function runRemote(
  fixture: RuntimeFixture,
  world: World,
  model: ModelProcess,
  cfg: RemoteConfig,
  say: (s: string) => void,
): Promise<RemoteFigures> {
  const port = Number(new URL(model.baseUrl).port);
  const remote = await startRemoteHost({ modelPort: port });
  const settingsPath = join(world.agentDir, "pi-shepherd", "settings.json");
  const before = await readFile(settingsPath, "utf8").catch(() => undefined);
  let rpc: RpcShepherd | undefined;
  try {
    const settings = before ? (JSON.parse(before) as Record<string, unknown>) : {};
    await mkdir(join(world.agentDir, "pi-shepherd"), { recursive: true, mode: 0o700 });
    await writeFile(settingsPath, JSON.stringify({ ...settings, hosts: { [HOST]: remote.hostSettings() } }), { mode: 0o600 });
    const shepherd = RpcShepherd.start({ cwd: world.work, env: { ...world.env, ...fixture.env }, extension: null });
    rpc = shepherd;
    const call = (args: Record<string, unknown>, timeoutMs = 180_000) => timedCall(shepherd, "shepherd", args, timeoutMs);
    const start = async (label: string, remoteSide: boolean) => {
      const r = await call({ action: "start", agent: world.definition.name, label, ...(remoteSide ? { host: HOST } : {}) });
      return { ms: r.ms, agentId: (r.outcome.details.agent as { agentId: string }).agentId };
    };
    const fig: RemoteFigures = {
      firstStartMs: 0,
      localStartMs: [],
      remoteStartMs: [],
      localPromptMs: [],
      remotePromptMs: [],
      localAnswerToWaitMs: [],
      remoteAnswerToWaitMs: [],
      overhead: undefined as unknown as RemoteFigures["overhead"],
      connections: 0,
    };

    say(`  remote: the first start on the host, then ${cfg.starts} cold starts on each side, alternating`);
    const first = await start("far-first", true);
    fig.firstStartMs = first.ms;
    const ids = { local: [] as string[], remote: [first.agentId] };
    for (let i = 0; i < cfg.starts; i++) {
      const sides = i % 2 === 0 ? [false, true] : [true, false];
      for (const side of sides) {
        const s = await start(`${side ? "far" : "near"}-${i}`, side);
        (side ? fig.remoteStartMs : fig.localStartMs).push(s.ms);
        (side ? ids.remote : ids.local).push(s.agentId);
      }
    }

    say(`  remote: prompt + wait x${cfg.prompts} on each side, alternating`);
    const ask = async (agentId: string, tag: string, remoteSide: boolean) => {
      const p = await call({ action: "prompt", agentId, message: directive({ reply: tag, delayMs: cfg.answerDelayMs, tag }) });
      const promptId = (p.outcome.details.prompt as { promptId: string }).promptId;
      const w = await call({ action: "wait", promptIds: [promptId] });
      const item = (w.outcome.details.results as { status: string; text?: string }[])[0];
      if (item?.status !== "completed" || item.text !== tag) throw new Error(`remote bench wait answered ${JSON.stringify(item)}`);
      const entry = await model.entry(tag);
      (remoteSide ? fig.remotePromptMs : fig.localPromptMs).push(p.ms);
      // Counted only when the wait was already running when the answer came, as intended.
      if (w.startAt < entry.lastByteAt!) (remoteSide ? fig.remoteAnswerToWaitMs : fig.localAnswerToWaitMs).push(w.endAt - entry.lastByteAt!);
    };
    await ask(ids.local[0]!, "remote-bench-warm-near", false);
    await ask(ids.remote[0]!, "remote-bench-warm-far", true);
    fig.localPromptMs.length = fig.remotePromptMs.length = fig.localAnswerToWaitMs.length = fig.remoteAnswerToWaitMs.length = 0;
    for (let k = 0; k < cfg.prompts; k++) {
      const sides = k % 2 === 0 ? [false, true] : [true, false];
      for (const side of sides) await ask(side ? ids.remote[0]! : ids.local[0]!, `remote-bench-${side ? "far" : "near"}-${k}`, side);
    }
    for (const id of ids.local) await call({ action: "close", agentId: id });

    say(`  remote: one wait on ${cfg.busySheep} busy remote sheep (${cfg.overheadWindowMs / 1000} s window)`);
    while (ids.remote.length < cfg.busySheep) ids.remote.push((await start(`far-busy-${ids.remote.length}`, true)).agentId);
    const busyMs = cfg.overheadWindowMs + 4000 + ids.remote.length * 500;
    const promptIds: string[] = [];
    for (const id of ids.remote) {
      const p = await call({ action: "prompt", agentId: id, message: directive({ reply: "late", delayMs: busyMs }) });
      promptIds.push((p.outcome.details.prompt as { promptId: string }).promptId);
    }
    const started = shepherd.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", 60_000);
    const waiting = call({ action: "wait", promptIds }, 240_000);
    await started;
    await sleep(500);
    const pid = shepherd.proc.pid!;
    const sshCpu = (pids: number[]) => new Map(pids.map((p) => [p, safeCpu(p)]));
    const a = { at: performance.now(), cpu: procCpu(pid).own, ssh: sshCpu(remote.localSsh()) };
    await sleep(cfg.overheadWindowMs);
    const b = { at: performance.now(), cpu: procCpu(pid).own, ssh: sshCpu(remote.localSsh()) };
    fig.connections = await remote.loggedIn();
    let sshMs = 0;
    for (const [p, cpu] of b.ssh) sshMs += cpu - (a.ssh.get(p) ?? 0);
    const w = await waiting;
    const items = w.outcome.details.results as { status: string }[];
    if (!items.every((i) => i.status === "completed")) throw new Error(`remote bench overhead wait: ${JSON.stringify(items)}`);
    fig.overhead = { sheep: ids.remote.length, windowMs: b.at - a.at, shepherdCpuMs: b.cpu - a.cpu, sshCpuMs: sshMs };
    for (const id of ids.remote) await call({ action: "close", agentId: id });
    return fig;
  } finally {
    await rpc?.stop().catch(() => undefined);
    await endRemote(remote);
    // The other parts run on the world's settings as they were.
    if (before === undefined) await rm(settingsPath, { force: true });
    else await writeFile(settingsPath, before, { mode: 0o600 });
  }
}

/** CPU (user+system, ms) of a process, 0 once it is gone. */
function safeCpu(pid: number): number {
  try {
    return procCpu(pid).own;
  } catch {
    return 0;
  }
}

async function endRemote(remote: RemoteHost) {
  await remote.end().catch(() => undefined);
}
