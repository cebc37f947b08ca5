/**
 * The warm pool as a user sets it up and as the herd action reports it: `warm` in the user
 * settings file (agent name -> idle sheep to keep), and `details.warm` of `herd`
 * ({agent: {ready, starting}}). A shepherd without a pool reports no `warm` at all.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { userSettingsPath } from "../../src/settings.ts";
import type { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { sleep } from "./clock.ts";
import { timedCall } from "./tool-call.ts";

export type WarmCounts = Record<string, { ready: number; starting: number }>;

/** Sets (or, given undefined, removes) the pool in the user settings file; read by a shepherd as it starts. */
export async function setWarm(agentDir: string, warm: Record<string, number> | undefined): Promise<void> {
  await setUserSetting(agentDir, "warm", warm);
}

/** Sets (or, given undefined, removes) one key of the user settings file. */
export async function setUserSetting(agentDir: string, key: string, value: unknown): Promise<void> {
  const path = userSettingsPath(agentDir);
  const text = await readFile(path, "utf8").catch(() => "{}");
  const settings = JSON.parse(text) as Record<string, unknown>;
  if (value !== undefined) settings[key] = value;
  else delete settings[key];
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify(settings, null, 2) + "\n");
}

export async function warmCounts(rpc: RpcShepherd): Promise<WarmCounts | undefined> {
  const r = await timedCall(rpc, "shepherd", { action: "herd" });
  return r.outcome.details.warm as WarmCounts | undefined;
}

/**
 * Polls herd until `target` sheep of the agent are ready. False when the shepherd has no pool:
 * it never reports `warm`, given `appearMs` to start one after its session started.
 */
export async function untilWarm(rpc: RpcShepherd, agent: string, target: number, o: { appearMs?: number; timeoutMs?: number } = {}): Promise<boolean> {
  const began = Date.now();
  const appearMs = o.appearMs ?? 10_000;
  const timeoutMs = o.timeoutMs ?? 90_000;
  for (;;) {
    const warm = await warmCounts(rpc);
    if (!warm && Date.now() - began > appearMs) return false;
    if ((warm?.[agent]?.ready ?? 0) >= target) return true;
    if (Date.now() - began > timeoutMs)
      throw new Error(`the warm pool did not reach ${target} ready ${agent} sheep in ${timeoutMs} ms: ${JSON.stringify(warm)}`);
    await sleep(250);
  }
}
