/**
 * Where a delegate's time goes, run by hand: node --import tsx bench/timeline.ts [--runtime tmux]
 *
 * One real pi shepherd over RPC (pi-shepherd installed, the default settings) delegates one task
 * (0.5 s answer) cold (warmMemory 0), then one to a sheep that came back, several times each. Each
 * call is printed as a timeline relative to its tool_execution_start: the audit log's events (start,
 * ready, prompt, take, result, renew, close), the sheep's own reports (status.json readyAt, the
 * result's startedAt/finishedAt), and the scripted model's log (request received, last byte sent).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RpcShepherd } from "../test/support/rpc-shepherd.ts";
import { directive } from "../test/support/scripted-model.ts";
import { sleep } from "./lib/clock.ts";
import { herdrFixture } from "./lib/herdr-fixture.ts";
import { startModelProcess } from "./lib/model.ts";
import type { RuntimeFixture } from "./lib/runtime-fixture.ts";
import { tmuxFixture } from "./lib/tmux-fixture.ts";
import { timedCall } from "./lib/tool-call.ts";
import { setUserSetting, untilWarm } from "./lib/warm-pool.ts";
import { makeWorld } from "./lib/world.ts";

type Audit = { event: string; time: string; agentId?: string; promptId?: string; warm?: true };

async function main() {
  const { values } = parseArgs({ options: { runtime: { type: "string" }, reps: { type: "string" } } });
  const name = (values.runtime ?? "tmux") as "tmux" | "herdr";
  const reps = Number(values.reps ?? 3);
  const model = await startModelProcess();
  const world = await makeWorld(model.baseUrl, name);
  const fixture: RuntimeFixture = name === "tmux" ? await tmuxFixture(world.dir, world.env) : await herdrFixture(world.dir, world.env);
  const env = { ...world.env, ...fixture.env };
  const auditPath = join(world.agentDir, "pi-shepherd", "audit.ndjson");
  const audit = async () =>
    (await readFile(auditPath, "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Audit);
  const sheepFile = async <T>(agentId: string, rel: string) =>
    JSON.parse(await readFile(join(world.agentDir, "pi-shepherd", "sheep", agentId, rel), "utf8").catch(() => "{}")) as T;
  let seq = 0;
  const one = async (shepherd: RpcShepherd, label: string) => {
    const tag = `timeline-${++seq}`;
    const r = await timedCall(shepherd, "shepherd", { action: "delegate", agent: "echo", task: directive({ reply: tag, delayMs: 500, tag }) });
    const [item] = r.outcome.details.results as { agentId: string; text?: string }[];
    if (item?.text !== tag) throw new Error(`the task answered ${JSON.stringify(item)}`);
    const e = await model.entry(tag);
    await sleep(1500); // the release: close, or the renewal, off the call's path
    const at = (t: string | number) => `${String(Math.round((typeof t === "number" ? t : Date.parse(t)) - r.startAt)).padStart(6)} ms`;
    const lines: [number, string][] = [
      [r.startAt, "tool_execution_start (the shepherd's pi runs the delegate call)"],
      [e.receivedAt, "the model receives the sheep's request"],
      [e.lastByteAt!, "the model sends the answer's last byte"],
      [r.endAt, "tool_execution_end (the call returns its result)"],
    ];
    const status = await sheepFile<{ readyAt?: string }>(item.agentId, "status.json");
    if (status.readyAt && Date.parse(status.readyAt) >= r.startAt - 5)
      lines.push([Date.parse(status.readyAt), "the sheep's pi reports ready (status.json readyAt)"]);
    for (const a of (await audit()).filter((a) => a.agentId === item.agentId && Date.parse(a.time) >= r.startAt - 5))
      lines.push([Date.parse(a.time), `audit ${a.event}${a.warm ? " (warm)" : ""}`]);
    lines.sort((a, b) => a[0] - b[0]);
    process.stdout.write(`\n${label} (${tag}, ${Math.round(r.ms)} ms):\n${lines.map(([t, s]) => `  ${at(t)}  ${s}`).join("\n")}\n`);
  };
  try {
    await setUserSetting(world.agentDir, "warmMemory", 0);
    let shepherd = RpcShepherd.start({ cwd: world.work, env, extension: null });
    await one(shepherd, "warm-up (not counted)");
    for (let k = 0; k < reps; k++) await one(shepherd, `cold ${k + 1}`);
    await shepherd.stop();
    await setUserSetting(world.agentDir, "warmMemory", undefined);
    shepherd = RpcShepherd.start({ cwd: world.work, env, extension: null });
    await one(shepherd, "first call of the session (cold; its sheep comes back)");
    for (let k = 0; k < reps; k++) {
      await untilWarm(shepherd, "echo", 1);
      await sleep(1000);
      await one(shepherd, `after the first call ${k + 1} (the sheep that came back)`);
    }
    await shepherd.stop();
  } finally {
    await fixture.cleanup();
    await world.cleanup();
    await model.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
