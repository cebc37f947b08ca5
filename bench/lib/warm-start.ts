/**
 * start from a warm pool: a real pi shepherd over RPC whose user settings keep idle echo sheep;
 * each start is timed once the pool is full again, so every one can take a sheep that is ready.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sheepDir } from "../../src/protocol/layout.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { untilGone } from "./files.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import { timedCall } from "./tool-call.ts";
import { setWarm, untilWarm } from "./warm-pool.ts";
import type { World } from "./world.ts";

export interface WarmStartConfig {
  pool: number;
  starts: number;
}

export interface WarmStartFigures {
  pool: number;
  startToolMs: number[];
}

/** Undefined when the shepherd has no warm pool (its herd reports none). */
export async function runWarmStart(
  fixture: RuntimeFixture,
  world: World,
  cfg: WarmStartConfig,
  say: (s: string) => void,
): Promise<WarmStartFigures | undefined> {
  const agent = world.definition.name;
  await setWarm(world.agentDir, { [agent]: cfg.pool });
  const rpc = RpcShepherd.start({ cwd: world.work, env: { ...world.env, ...fixture.env }, extension: null });
  const pids: number[] = [];
  try {
    if (!(await untilWarm(rpc, agent, cfg.pool))) {
      say("  warm start: n/a (no warm pool)");
      return undefined;
    }
    say(`  warm start x${cfg.starts} from a pool of ${cfg.pool}`);
    const fig: WarmStartFigures = { pool: cfg.pool, startToolMs: [] };
    for (let i = 0; i < cfg.starts; i++) {
      await untilWarm(rpc, agent, cfg.pool);
      const r = await timedCall(rpc, "shepherd", { action: "start", agent, label: `w${i + 1}` });
      fig.startToolMs.push(r.ms);
      const agentId = (r.outcome.details.agent as { agentId: string }).agentId;
      const status = JSON.parse(await readFile(join(sheepDir(world.agentDir, agentId), "status.json"), "utf8")) as { pid: number };
      pids.push(status.pid);
      // Closed at once: the herd stays the pool's size, as it was for the first start.
      await timedCall(rpc, "shepherd", { action: "close", agentId });
    }
    return fig;
  } finally {
    await rpc.stop().catch(() => undefined);
    await Promise.all(pids.map((p) => untilGone(p)));
    await setWarm(world.agentDir, undefined);
  }
}
