/**
 * npm run demo: a real shepherd pi (RPC mode) on the offline scripted model starts two real pi
 * sheep in tmux panes, prompts both, waits for both, prints their answers and closes them.
 * Everything runs on a private tmux server and temp dirs that are removed at the end.
 */
import { execa } from "execa";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAgentDir } from "../test/support/agent-dir.ts";
import { RpcShepherd, repoRoot } from "../test/support/rpc-shepherd.ts";
import { directive, startScriptedModel } from "../test/support/scripted-model.ts";

const pause = Number(process.env.DEMO_PAUSE_MS ?? "1500");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (s: string) => process.stdout.write(s + "\n");

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-demo-"));
  const socket = join(dir, "tmux.sock");
  const model = await startScriptedModel();
  const agentDir = await writeAgentDir(model.baseUrl, join(dir, "agent"));
  const work = join(dir, "work");
  await mkdir(work);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${join(repoRoot, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_SHEPHERD_RUNTIME: "tmux",
    PI_SHEPHERD_TMUX_SOCKET: socket,
  };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const shepherd = RpcShepherd.start({ cwd: work, env });
  const pids: number[] = [];
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    await shepherd.stop().catch(() => undefined);
    await execa("tmux", ["-S", socket, "kill-server"], { reject: false });
    await model.close();
    await rm(dir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

  const call = async (args: Record<string, unknown>) => {
    say(`\nshepherd> ${JSON.stringify(args)}`);
    const r = await shepherd.call(args);
    say(
      (r.isError ? "ERROR " : "") +
        r.text
          .split("\n")
          .map((l) => `  ${l}`)
          .join("\n"),
    );
    if (r.isError) throw new Error(r.text);
    return r.details;
  };

  try {
    say("pi-shepherd demo: a real shepherd pi with two real pi sheep, on the offline scripted model.");
    say(`Watch the sheep while it runs:  tmux -S ${socket} attach -t pi-shepherd`);
    const scout = (await call({ action: "start", agent: "scout", label: "scout" })).agent as { agentId: string };
    const worker = (await call({ action: "start", agent: "worker", label: "worker" })).agent as { agentId: string };
    for (const a of [scout, worker]) {
      const s = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "sheep", a.agentId, "status.json"), "utf8")) as { pid: number };
      pids.push(s.pid);
    }
    await sleep(pause);
    const p1 = (
      await call({
        action: "prompt",
        agentId: scout.agentId,
        message: directive({
          reply: "Scout report: the entry point is extensions/shepherd.ts; the core lives in src/core.",
          delayMs: 2500,
          chunks: 8,
          chunkDelayMs: 150,
        }),
      })
    ).prompt as { promptId: string };
    const p2 = (
      await call({
        action: "prompt",
        agentId: worker.agentId,
        message: directive({ reply: "Worker done: added the feature and ran the tests (all green).", delayMs: 2000, chunks: 8, chunkDelayMs: 150 }),
      })
    ).prompt as { promptId: string };
    const results = (await call({ action: "wait", promptIds: [p1.promptId, p2.promptId] })).results as { status: string; text?: string }[];
    await call({ action: "herd" });
    await sleep(pause);
    await call({ action: "close", agentId: scout.agentId });
    await call({ action: "close", agentId: worker.agentId });
    // close names where each session is kept, and in your own use it stays there; the demo's
    // whole temp dir goes at the end, those sessions with it.
    say(`\n(The demo removes its temp dir ${dir} when it ends, the session files above with it; outside the demo they stay.)`);
    say("\nAnswers:");
    for (const r of results) say(`  [${r.status}] ${r.text}`);
    const ok = results.length === 2 && results.every((r) => r.status === "completed");
    await cleanup();
    const running = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // A closed pane's pi takes a moment to finish exiting after its hangup: give it a few seconds.
    for (let i = 0; i < 50 && pids.some(running); i++) await sleep(100);
    const left = pids.filter(running);
    say(
      left.length
        ? `\nWARNING: sheep processes still running: ${left.join(", ")}`
        : "\nNothing left running: sheep closed; the tmux server and the temp dir, the session files in it included, removed.",
    );
    process.exitCode = ok && left.length === 0 ? 0 : 1;
  } catch (e) {
    await cleanup();
    throw e;
  }
}

main().catch((e) => {
  console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
