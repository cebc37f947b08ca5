/**
 * The panel's figures (issue 25). On a real pi shepherd in RPC mode with real pi sheep and the
 * panel on (`/shepherd panel on`), one events client (what an open page holds): how long a
 * sheep's result takes from the sheep writing it to the client having its `result` event, and
 * the shepherd's CPU while it waits on every sheep. In the bench process, on the in-memory sheep
 * host: `GET /api/v1/sheep` for a herd of 64, the route's own cost.
 */
import { panelOn } from "./panel-on.ts";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sheepDir, sheepLayout } from "../../src/protocol/layout.ts";
import { ask, openEvents, panelWorld } from "../../test/support/panel-world.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import { untilGone } from "./files.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import type { World } from "./world.ts";

export interface PanelConfig {
  /** Real sheep of the RPC shepherd. */
  sheep: number;
  /** Rounds of one prompt to every sheep, each result's event timed. */
  rounds: number;
  cpuWindowMs: number;
  /** Sheep of the in-memory herd the list route is timed on, and how many times. */
  listSheep: number;
  listRequests: number;
}

export interface PanelFigures {
  /** From the finishedAt the sheep wrote into its result file to the events client having the `result` event. */
  eventMs: number[];
  cpu: { sheep: number; windowMs: number; cpuMs: number; events: number };
  /** GET /api/v1/sheep, whole requests over loopback, in the bench process. */
  listMs: number[];
  listSheep: number;
}

export async function runPanel(fixture: RuntimeFixture, world: World, cfg: PanelConfig, say: (s: string) => void): Promise<PanelFigures> {
  const fig: PanelFigures = { eventMs: [], cpu: undefined as unknown as PanelFigures["cpu"], listMs: [], listSheep: cfg.listSheep };
  say(`  panel: GET /api/v1/sheep for ${cfg.listSheep} sheep x${cfg.listRequests} (in-memory host)`);
  const mem = await panelWorld();
  try {
    for (let i = 0; i < cfg.listSheep; i++) {
      const s = await mem.start(`l${i + 1}`);
      // A herd that has worked: a few settled prompts each, with usage, and a queue on some.
      for (let k = 0; k < 3; k++) {
        const p = (await mem.shepherd.prompt(s.agentId, `task ${k} of ${s.label}\nmore lines`)).promptId;
        mem.world
          .mem(s.agentId)
          .outbox.set(p, { promptId: p, status: "completed", text: "done ".repeat(200), usage: { input: 1200, output: 300, cost: 0.01 } });
        await mem.shepherd.wait([p], { timeoutSec: 5 });
      }
      await mem.shepherd.prompt(s.agentId, `working on item ${i}`);
    }
    const headers = mem.authed();
    for (let i = 0; i < 20; i++) await ask(mem.port, { path: "/api/v1/sheep", headers }); // warm
    for (let i = 0; i < cfg.listRequests; i++) {
      const t0 = performance.now();
      const r = await ask(mem.port, { path: "/api/v1/sheep", headers });
      fig.listMs.push(performance.now() - t0);
      if (r.status !== 200 || (r.json() as { sheep: unknown[] }).sheep.length !== cfg.listSheep)
        throw new Error(`panel list: ${r.status} ${r.text.slice(0, 200)}`);
    }
  } finally {
    await mem.close();
  }

  const env = { ...world.env, ...fixture.env };
  const rpc = RpcShepherd.start({ cwd: world.work, env, extension: null });
  const pids: number[] = [];
  try {
    say(`  panel: ${cfg.sheep} sheep on a real pi shepherd with the panel on and one events client`);
    const ids: string[] = [];
    for (let i = 0; i < cfg.sheep; i++) {
      const r = await rpc.ok({ action: "start", agent: world.definition.name, label: `p${i + 1}` });
      const agentId = (r.details.agent as { agentId: string }).agentId;
      ids.push(agentId);
      pids.push((JSON.parse(await readFile(join(sheepDir(world.agentDir, agentId), "status.json"), "utf8")) as { pid: number }).pid);
    }
    const { port, token } = await panelOn(rpc);
    const client = await openEvents(port, { authorization: `Bearer ${token}` });
    if (client.status !== 200) throw new Error(`events: ${client.status}`);
    const promptIds = (r: { details: Record<string, unknown> }) => (r.details.prompt as { promptId: string }).promptId;

    say(`  panel: event latency, ${cfg.rounds} rounds of a prompt to each of ${cfg.sheep} sheep`);
    for (let round = 0; round < cfg.rounds; round++) {
      const from = client.events.length;
      const sent: { agentId: string; promptId: string }[] = [];
      for (const [i, agentId] of ids.entries()) {
        // Answers spread over a second, as a herd's come in: each result is its own event.
        const r = await rpc.ok({ action: "prompt", agentId, message: directive({ reply: `r${round}-${i}`, delayMs: 300 + ((i * 61) % 1000) }) });
        sent.push({ agentId, promptId: promptIds(r) });
      }
      for (const { agentId, promptId } of sent) {
        const e = await client.next((x) => x.event === "result" && (JSON.parse(x.data) as { promptId: string }).promptId === promptId, from, 60_000);
        const result = JSON.parse(await readFile(sheepLayout(sheepDir(world.agentDir, agentId)).outboxFile(promptId), "utf8")) as { finishedAt: string };
        fig.eventMs.push(e.at - Date.parse(result.finishedAt));
      }
    }

    say(`  panel: the shepherd's CPU while waiting on ${cfg.sheep} sheep (${cfg.cpuWindowMs / 1000} s window), panel on, one client`);
    const busyMs = cfg.cpuWindowMs + 4000 + ids.length * 500;
    const waitIds: string[] = [];
    for (const agentId of ids) waitIds.push(promptIds(await rpc.ok({ action: "prompt", agentId, message: directive({ reply: "late", delayMs: busyMs }) })));
    const started = rpc.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", 60_000);
    const waiting = rpc.call({ action: "wait", promptIds: waitIds }, busyMs + 120_000);
    await started;
    await sleep(1000);
    const pid = rpc.proc.pid!;
    const e0 = client.events.length;
    const a = { at: performance.now(), cpu: procCpu(pid).own };
    await sleep(cfg.cpuWindowMs);
    const b = { at: performance.now(), cpu: procCpu(pid).own };
    fig.cpu = { sheep: ids.length, windowMs: b.at - a.at, cpuMs: b.cpu - a.cpu, events: client.events.length - e0 };
    const w = await waiting;
    const items = w.details.results as { status: string }[] | undefined;
    if (!items?.every((i) => i.status === "completed")) throw new Error(`panel cpu wait: ${w.text.slice(0, 300)}`);
    client.close();
    return fig;
  } finally {
    await rpc.stop().catch(() => undefined);
    await Promise.all(pids.map((p) => untilGone(p)));
  }
}
