/**
 * npm run bench: how much time and CPU the shepherd adds to real pi sheep, on the tmux runtime
 * and on the herdr runtime (through the project's fake herdr), with the offline scripted model.
 * Prints a table and writes bench/results/latest.json.
 *
 *   npm run bench                         both runtimes, full sample sizes (a few minutes)
 *   npm run bench -- --runtime tmux       one runtime
 *   npm run bench -- --quick --out F      small samples, written to F instead
 *   npm run bench -- --only warm,peer     some parts only (core, rpc, warm, peer, panel, terminal, subagents, remote, egress, sandbox, tool-tokens, first, herd64, remote64)
 *   npm run bench -- --compare F          each figure beside the same one of an earlier run's JSON
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "../test/support/rpc-shepherd.ts";
import { compareTable } from "./lib/compare.ts";
import { type EgressConfig, runEgress } from "./lib/egress-bench.ts";
import { runCore, type CoreConfig } from "./lib/core-bench.ts";
import { herdrFixture } from "./lib/herdr-fixture.ts";
import { describeMachine } from "./lib/machine.ts";
import { startModelProcess, type ModelProcess } from "./lib/model.ts";
import { runPanel, type PanelConfig } from "./lib/panel-bench.ts";
import { runTerminal, type TerminalConfig } from "./lib/terminal-bench.ts";
import { type HerdrTerminalConfig, runHerdrTerminal } from "./lib/herdr-terminal-bench.ts";
import { runPeer, type PeerConfig } from "./lib/peer.ts";
import { runRemote, type RemoteConfig } from "./lib/remote-bench.ts";
import { buildRows, renderTable, summarizeRun, verdict, type RuntimeRun } from "./lib/report.ts";
import { runSubagents, type SubagentsConfig } from "./lib/subagents.ts";
import { runRpc, type RpcConfig } from "./lib/rpc-bench.ts";
import { runSandbox, type SandboxConfig } from "./lib/sandbox-bench.ts";
import type { RuntimeFixture } from "./lib/runtime-fixture.ts";
import { tmuxFixture } from "./lib/tmux-fixture.ts";
import { measureToolTokens, TOOL_TOKENS_DEFINITION } from "./lib/tool-tokens.ts";
import { runWarmStart, type WarmStartConfig } from "./lib/warm-start.ts";
import { makeWorld } from "./lib/world.ts";
import { type FirstCallConfig, runFirstCall } from "./lib/first-call.ts";
import { type Herd64Config, type Herd64Figures, herd64Table, runHerd64 } from "./lib/herd64-bench.ts";
import { type Remote64Config, type Remote64Figures, remote64Table, runRemote64 } from "./lib/remote64-bench.ts";

const PARTS = [
  "core",
  "rpc",
  "warm",
  "peer",
  "panel",
  "terminal",
  "subagents",
  "remote",
  "egress",
  "sandbox",
  "tool-tokens",
  "first",
  "herd64",
  "remote64",
] as const;
type Part = (typeof PARTS)[number];

const FULL: {
  core: CoreConfig;
  rpc: RpcConfig;
  warm: WarmStartConfig;
  peer: PeerConfig;
  panel: PanelConfig;
  terminal: TerminalConfig;
  herdrTerminal: HerdrTerminalConfig;
  subagents: SubagentsConfig;
  remote: RemoteConfig;
  egress: EgressConfig;
  sandbox: SandboxConfig;
  first: FirstCallConfig;
  herd64: Herd64Config;
  remote64: Remote64Config;
} = {
  core: {
    sheep: 16,
    prompts: 21,
    answerDelayMs: 250,
    herdSizes: [1, 4, 8, 16],
    herdRounds: 3,
    herdDelayMs: 1500,
    overheadSheep: 8,
    overheadWindowMs: 8000,
    memorySamples: 6,
  },
  rpc: { sheep: 16, pairedStarts: 16, prompts: 9, answerDelayMs: 800, overheadWindowMs: 8000 },
  warm: { pool: 4, starts: 9 },
  peer: { reps: 7, oneDelayMs: 500, fourDelayMs: 1000, pool: 4 },
  panel: { sheep: 16, rounds: 3, cpuWindowMs: 10_000, listSheep: 64, listRequests: 200 },
  terminal: { sheep: 16, keys: 30, cpuWindowMs: 10_000 },
  herdrTerminal: { panes: 16, settleMs: 10_000, cpuWindowMs: 10_000, windows: 3, keys: 20, keyGapMs: 2500 },
  subagents: { reps: 3, oneDelayMs: 500, fourDelayMs: 1000, pool: 4 },
  remote: { starts: 8, prompts: 9, answerDelayMs: 800, busySheep: 16, overheadWindowMs: 8000 },
  egress: { requests: 41, sheep: 16 },
  sandbox: { starts: 8, prompts: 9, answerDelayMs: 800, requests: 21, probes: 2, busySheep: 16, windowMs: 8000 },
  first: { reps: 3, tokensPerSec: 60, oneDelayMs: 500, fourDelayMs: 1000, settleMs: 2000 },
  herd64: { sheep: 64, tailSizes: [1, 16, 64], tailRounds: 2, tailDelayMs: 3000, cpuWindowMs: 10_000, listRequests: 100, herdCalls: 9 },
  remote64: { hosts: 4, perHost: 16, tailSizes: [1, 16, 64], tailDelayMs: 3000, cpuWindowMs: 10_000, listRequests: 50, herdCalls: 5 },
};

const QUICK: typeof FULL = {
  core: { ...FULL.core, sheep: 8, prompts: 5, herdSizes: [1, 8], herdRounds: 1, overheadSheep: 8, overheadWindowMs: 3000, memorySamples: 2 },
  // A tick of CPU accounting (10 ms) is 0.33 % of a 3 s window: too coarse against a 1 % target.
  rpc: { ...FULL.rpc, pairedStarts: 4, prompts: 3, overheadWindowMs: 6000 },
  warm: { ...FULL.warm, starts: 3 },
  peer: { ...FULL.peer, reps: 3 },
  panel: { ...FULL.panel, rounds: 1, cpuWindowMs: 6000, listRequests: 50 },
  terminal: { ...FULL.terminal, keys: 15, cpuWindowMs: 6000 },
  herdrTerminal: { ...FULL.herdrTerminal, keys: 10, cpuWindowMs: 6000, windows: 1 },
  remote: { ...FULL.remote, starts: 3, prompts: 3, overheadWindowMs: 6000 },
  // The issue's own comparison is 3 rounds: a quick run takes as many.
  subagents: FULL.subagents,
  egress: { requests: 11, sheep: 16 },
  sandbox: { ...FULL.sandbox, starts: 3, prompts: 3, requests: 11, probes: 1, windowMs: 6000 },
  first: FULL.first,
  herd64: { ...FULL.herd64, sheep: 8, tailSizes: [1, 8], tailRounds: 1, cpuWindowMs: 4000, listRequests: 20, herdCalls: 3 },
  remote64: { ...FULL.remote64, hosts: 2, perHost: 2, tailSizes: [1, 2, 4], cpuWindowMs: 4000, listRequests: 10, herdCalls: 2 },
};

export const DEFINITIONS = {
  start: "median duration of start (pane, mark, launcher, pi boot, ready) over every sheep started",
  bareBoot:
    "the same pi (argv, env and cwd of the same launch spec, sheep extension included) started in a new pane of the same " +
    "server without shepherd, launcher or pane mark, typed into the pane's shell: tmux new-window plus the command line; " +
    "herdr tab create plus pane run. Timed from asking for the pane to the updatedAt the sheep extension writes into " +
    "status.json on session_start. Bare boots are interleaved with the starts they are compared with. The reference row " +
    "starts pi as the tmux pane's own command, with no shell at all, the way the tmux runtime starts a sheep. On RPC the " +
    "first starts (all 16 in a full run) are each paired with bare boots of every mode; the cold start's target is " +
    "against the no-shell boot.",
  setup:
    "as a person's setup: the agent file names tools (read, bash) and model (scripted-model), and pi keeps its default " +
    "settings (no quietStartup), so every pi boots with its startup header and the tools it is given",
  prompt: "duration of the prompt call (returns once the prompt file is in the sheep's inbox)",
  answerToWait:
    "from the scripted model's last byte of the answer (its request log) to wait returning it, the wait already running; " +
    "split at the finishedAt the sheep writes into its result file",
  herd:
    "n sheep prompted one after another with the same 1.5 s task, then one wait for all; tail = wait returned - the last " +
    "answer's last byte; overlapped = every request reached the model before any answer ended",
  overhead:
    "core: 8 sheep, rpc: 16 sheep, each busy on a task longer than the window, one wait for all of them; over 8 s of pure " +
    "waiting, the shepherd process's CPU (user+system) and the multiplexer processes it ran (tmux: a counting wrapper " +
    "first on PATH; herdr: the fake herdr's calls.jsonl)",
  warmStart:
    'a pi shepherd over RPC whose user settings hold warm: {"echo": 4}; herd is polled until 4 are ready before each ' +
    "start, and the sheep started is closed after it; median duration of the start tool call. n/a: the shepherd reports " +
    "no warm pool in herd's details",
  peer:
    "pi's example subagent extension (examples/extensions/subagent of the installed pi, loaded with -e into a second RPC " +
    "pi: one headless pi --mode json -p per task) against the shepherd's delegate, same scripted model, agent file and " +
    "tasks: one task answered after 0.5 s, four in parallel answered after 1 s; whole tool calls, the first call of each " +
    "pi not counted, the two alternating which goes first; ratio of medians delegate / example. Cold: no pool; warm: a " +
    "shepherd with a pool of 4, herd polled until 4 are ready, then 1 s more, before each call of either tool (the refill competes with neither). Split in the detail (model's request " +
    "log): to the model = tool call start to the last task's request reaching the model (pane or process, pi boot, the " +
    "prompt); after the answer = the last answer's last byte to the tool call's end (result back, sheep closed). " +
    "pi alone (tmux): pi on the agent dir without pi-shepherd, with the agent file's model, tools and prompt as arguments " +
    "and a first message, as a pane's own command (its interactive screen, as every sheep runs) and as pi --mode json -p " +
    "(as each task of the example); from asking for the pane or spawning the process to that message reaching the model",
  memory:
    "resident memory (VmRSS) of every process in a sheep's pane (tmux: pi alone; herdr: the pane's shell, report-exit.sh " +
    "and pi) against a bare pi's own process (the same launch spec as the pane's own command on tmux, typed into a shell on " +
    "herdr), each read 2 s after it reported ready; one sheep and one bare pi per pair, the ratio is the median of the pairs'",
  panel:
    "a real pi shepherd over RPC with 16 real sheep, /shepherd panel on, and one events client in the bench process (what " +
    "an open page holds): event = from the finishedAt a sheep writes into its result file to the client having the result's " +
    "event (the sheep's answers spread over a second; the shepherd sees the file by its watch, reads it, settles it, and " +
    "sends the event; no wait runs); CPU = the shepherd process's utime+stime over a window of a wait on all 16 busy " +
    "sheep with the panel on and the client connected. GET /api/v1/sheep: whole requests over loopback to a panel in the " +
    "bench process on a real core over the in-memory sheep-files port, 64 sheep with 3 settled prompts and one running each",
  terminal:
    "tmux only: a real pi shepherd over RPC with 16 real sheep and /shepherd panel on. echo = in Debian's chromium " +
    "(headless), one sheep's page with its terminal live and typing ticked: from a key's keydown (the page's own clock) " +
    "to xterm drawing the typed text in the terminal's rows (through POST …/terminal, tmux send-keys, pi's editor, the " +
    "pane's pipe-pane and the stream), one key at a time, median. CPU = the shepherd process's utime+stime over a window " +
    "with a terminal stream open to each of the 16 idle sheep (opened from the bench process as the page opens it)",
  herdrTerminal:
    "herdr has no output stream, so its terminal is a poll of each pane's screen by herdr CLI calls the shepherd spawns " +
    "(src/runtimes/herdr/pane-terminal.ts). The herdr runtime's own watches run in the bench process on the fake herdr " +
    "(a node CLI whose panes are real tmux panes), 16 of them on idle shells; CPU = the bench process's own " +
    "process.cpuUsage (user+system) over 3 windows of 10 s, 10 s after the watches opened, median (the herdr processes' " +
    "own CPU is not counted: the fake's node start would dwarf a real herdr's; shown apart, with a window of the same " +
    "process before any watch opened). echo = then keys typed one at a time through sendKeys into one watched shell, " +
    "2.5 s apart, from the call to the changed screen reaching the watch's sink; it includes the fake's calls (a node " +
    "start each: the key's pane get and send-text, the read, the mark's pane get), so it is far above a real herdr's; " +
    "the detail gives the time after the keys were in and one lone fake call",
  subagents:
    "pi-subagents 0.67.0 (a dev dependency) loaded with -e into the shepherd's own RPC pi beside pi-shepherd: its subagent " +
    "tool in foreground mode (async: false; four tasks as a workflow script of runs.all with four foreground children) " +
    "against the delegate action, same echo agent file and scripted model, one task answered after 0.5 s and four in " +
    "parallel after 1 s; every answer checked; 3 rounds alternating which tool goes first, medians. cold: warmMemory 0 " +
    "and no pool (each task boots its pi); after the first call: the default settings (sheep come back into the default " +
    "pool), the first call of each tool in the session not counted, and before each call the sheep that came back are " +
    "ready again (herd polled) plus 1 s; pool of 4: warm {echo: 4} as measured before. Memory: VmRSS of the shepherd's " +
    "pi and of every live sheep's pane after the default phase, idle, against the default warmMemory",
  remote:
    "tmux only: a real pi shepherd over RPC whose user settings name the test's remote host (a network namespace on a " +
    "veth pair, a tmpfs only it sees, a private sshd; test/support/remote-host.ts), real pi sheep on both sides, one " +
    "scripted model. After the host's first start (ssh's connection, the agent deployed and started), cold starts " +
    "alternate local and remote, then prompt + wait on one sheep of each side, alternating; each row is the median " +
    "remote minus the median local. Then one wait on 16 busy remote sheep: CPU (user+system) of the shepherd process " +
    "and of its ssh processes to the host over the window; and the connections logged in to the host's sshd",
  first:
    "issue 36's first call: for each round and size, three new shepherds (one pi over RPC each, pi-shepherd and " +
    "pi-subagents both loaded as in subagents), each making one call after pi answered its first RPC command and 2 s " +
    "more (a person reading the screen): delegate with speculative start (the default), delegate with " +
    "speculativeStart false, and pi-subagents' foreground subagent (four tasks: runs.all of four children); the " +
    "scripted model streams each call's arguments at 60 tokens/s (4 characters a token, every 50 ms) for all three; " +
    "each call timed from the prompt sent to its tool_execution_end, so the model's stream counts for every side; " +
    "one task answered after 0.5 s, four after 1 s; 3 rounds rotating which side goes first; medians",
  egress:
    "the sandbox's egress proxy (src/sandbox/egress), in the bench process: one streamed chat request to the scripted model on a new " +
    "connection, direct against through the forwarder's loopback port, the proxy's Unix socket and its checked connect (CONNECT, as " +
    "pi's undici sends it), alternating, the first two of each not counted; memory: a child process's VmRSS after loading the " +
    "proxy's modules and after opening 16 sheep sockets with one tunnel and one answered request open through each",
  sandbox:
    "tmux only: a real pi shepherd over RPC, real pi sheep in real tmux panes, sandboxed (start with sandbox: true: real " +
    "bubblewrap, the shepherd's egress proxy) and plain, every step alternating the sides and which goes first. After a first " +
    "start of each (not counted; the sandboxed one checks bubblewrap once per shepherd), cold starts; prompt + wait on one " +
    "sheep of each (answer after 0.8 s; answer -> wait from the model's last byte, the wait already running); a model request " +
    "timed inside a sheep by a script its bash tool runs (bench/lib/sandbox-probe.ts): streamed chat requests to the scripted " +
    "model, each on a new connection, via HTTP_PROXY (forwarder -> the proxy's socket -> the proxy, CONNECT as pi sends it) in " +
    "the sandboxed sheep, straight in the plain one, the first two of each run not counted. Then 16 sheep of one side work, " +
    "their answers streaming in chunks every 250 ms for longer than the window, one wait on all; windows in the order plain, " +
    "sandboxed, sandboxed, plain, then one of each (sandboxed first) whose sheep wait for an answer that comes after the window: " +
    "the shepherd process's CPU (user+system) over the window and its VmRSS at the end of the streaming windows, every tunnel " +
    "open; the proxy runs in the shepherd, so its memory is the sandboxed windows' RSS minus the plain ones' (medians)",
  herd64:
    "tmux only, issue 36: a real pi shepherd over RPC (maxParallel and maxTasks 64, warmMemory 0) and 64 real pi sheep. " +
    "First a delegate of 64 tasks answered at once (whole tool call), then 64 start calls in one model turn (pi runs them " +
    "in parallel; the first start to the last end), every sheep's first model call not counted. Tail: n sheep prompted " +
    "one after another with the same 3 s task, one wait tool call for all; its end minus the last answer's last byte. herd: " +
    "whole tool calls at 64; GET /api/v1/sheep: whole loopback requests to the shepherd's own panel with the 64 real sheep. " +
    "Memory: the shepherd's VmRSS 2 s after a first call with no sheep, and 2 s after the 64 answered their first prompt; " +
    "the sheep's: every sheep's pi VmRSS summed. CPU: the shepherd's utime+stime over a window of one wait on 64 busy " +
    "sheep, and the multiplexer processes it ran (a counting wrapper first on PATH)",
  remote64:
    "tmux only, issue 36: 4 x 16 real pi sheep, 16 on each of 4 of the test's remote hosts (a network namespace and a " +
    "private sshd each), one real pi shepherd over RPC here (maxParallel and maxTasks 64, warmMemory 0). The 64 starts " +
    "are one model turn (pi runs them in parallel; every host connected and deployed within it), every sheep's first " +
    "model call not counted. Tail: n sheep (1 and 16 on one host, 64 on all four) prompted one after another with the " +
    "same 3 s task, one wait for all; its end minus the last answer's last byte. herd and GET /api/v1/sheep as herd64's. " +
    "CPU: over a window of one wait on the busy sheep of one host, then of all four, the shepherd's utime+stime and its " +
    "ssh processes' (ControlMaster and channels of the hosts' client configs). Memory as herd64's",
  toolTokens: TOOL_TOKENS_DEFINITION,
  via:
    "core: composeShepherd's Shepherd driven in the bench process (real pi sheep in real panes, no shepherd model); rpc: a " +
    "real pi shepherd in RPC mode with pi-shepherd loaded, whole tool calls timed by its tool_execution_start/end events",
};

async function main() {
  const { values } = parseArgs({
    options: {
      runtime: { type: "string", multiple: true },
      quick: { type: "boolean" },
      out: { type: "string" },
      only: { type: "string" },
      compare: { type: "string" },
    },
  });
  const parts = new Set<Part>((values.only?.split(",") ?? PARTS) as Part[]);
  const unknown = [...parts].filter((p) => !PARTS.includes(p));
  if (unknown.length) throw new Error(`--only takes ${PARTS.join(", ")}; not ${unknown.join(", ")}`);
  const runtimes = (values.runtime ?? ["tmux", "herdr"]).flatMap((r) => r.split(",")) as ("tmux" | "herdr")[];
  const cfg = values.quick ? QUICK : FULL;
  const out = resolve(values.out ?? join(repoRoot, "bench", "results", "latest.json"));
  const say = (s: string) => process.stdout.write(s + "\n");
  const began = Date.now();
  const machine = await describeMachine();
  say(
    `pi-shepherd bench: ${machine.nproc} x ${machine.cpuModel}, ${machine.memGiB} GiB, node ${machine.node}, ${machine.tmux}, pi ${machine.pi}, load ${machine.loadavg.join(" ")}`,
  );

  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

  const runs: Record<string, RuntimeRun> = {};
  let herd64: Herd64Figures | undefined;
  let remote64: Remote64Figures | undefined;
  // Text, not time: measured once, beside the first runtime's figures, with no sheep or model.
  const toolTokens = parts.has("tool-tokens") ? measureToolTokens(say) : undefined;
  const timed = [...parts].some((p) => p !== "tool-tokens");
  let model: ModelProcess | undefined;
  try {
    for (const name of timed ? runtimes : []) {
      if (!model) {
        model = await startModelProcess();
        cleanups.push(() => model!.close());
      }
      say(`\n${name}:`);
      const world = await makeWorld(model.baseUrl, name);
      cleanups.push(() => world.cleanup());
      const fixture: RuntimeFixture = name === "tmux" ? await tmuxFixture(world.dir, world.env) : await herdrFixture(world.dir, world.env);
      cleanups.push(() => fixture.cleanup());
      const run: RuntimeRun = {};
      if (parts.has("core")) run.core = await runCore(fixture, world, model, cfg.core, say);
      if (parts.has("rpc")) run.rpc = await runRpc(fixture, world, model, cfg.rpc, say);
      if (parts.has("warm")) run.warmStart = (await runWarmStart(fixture, world, cfg.warm, say)) ?? null;
      if (parts.has("peer")) run.peer = await runPeer(fixture, world, model, cfg.peer, say);
      if (parts.has("panel")) run.panel = await runPanel(fixture, world, cfg.panel, say);
      // herdr has no terminal stream: its terminal is a poll, measured as the watches the shepherd runs.
      if (parts.has("terminal") && name === "tmux") run.terminal = await runTerminal(fixture, world, cfg.terminal, say);
      if (parts.has("terminal") && name === "herdr") run.herdrTerminal = await runHerdrTerminal(cfg.herdrTerminal, say);
      // The remote host runs tmux; its figures are measured once, beside the tmux runtime's.
      if (parts.has("remote") && name === "tmux") run.remote = await runRemote(fixture, world, model, cfg.remote, say);
      // The proxy does not depend on the runtime: measured once, beside the first runtime's figures.
      // Sandboxed sheep in tmux panes, as the issue measures them; once, beside the tmux runtime's figures.
      if (parts.has("sandbox") && name === "tmux") run.sandbox = await runSandbox(fixture, world, model, cfg.sandbox, say);
      if (parts.has("egress") && name === runtimes[0]) run.egress = await runEgress(model.baseUrl, cfg.egress, say);
      if (parts.has("subagents")) run.subagents = await runSubagents(fixture, world, model, cfg.subagents, say);
      if (parts.has("first")) run.firstCall = await runFirstCall(fixture, world, model, cfg.first, say);
      if (parts.has("herd64") && name === "tmux") herd64 = await runHerd64(fixture, world, model, cfg.herd64, say);
      // The remote hosts run tmux: measured once, beside the tmux runtime's figures.
      if (parts.has("remote64") && name === "tmux") remote64 = await runRemote64(fixture, world, model, cfg.remote64, say);
      runs[name] = run;
      await cleanups.pop()!(); // the fixture
      await cleanups.pop()!(); // the world
    }
  } finally {
    await cleanup();
  }

  if (toolTokens) runs[runtimes[0]!] = { ...runs[runtimes[0]!], toolTokens };
  const rows = buildRows(runs);
  const table = renderTable(rows, runtimes);
  say(`\n${table}\n`);
  say("core = Shepherd in the bench process; rpc = a real pi shepherd, whole tool calls. Definitions: bench/results/latest.json.");
  if (herd64) say(`\nA herd of ${herd64.sheep} (tmux, RPC):\n| figure | value | target |\n|---|---|---|\n${herd64Table(herd64)}\n`);
  if (remote64) say(`\nA herd of ${remote64.hosts} x ${remote64.perHost} on remote hosts (tmux, RPC):\n${remote64Table(remote64)}\n`);
  if (values.compare) say(`\n${await compareTable(rows, runtimes, resolve(values.compare))}\n`);
  const after = await describeMachine();
  const result = {
    generatedAt: new Date().toISOString(),
    durationSec: Math.round((Date.now() - began) / 1000),
    machine: { ...machine, loadavgAfter: after.loadavg },
    config: cfg,
    parts: [...parts],
    definitions: DEFINITIONS,
    rows,
    runtimes: Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, summarizeRun(r)])),
    ...(herd64 ? { herd64 } : {}),
    ...(remote64 ? { remote64 } : {}),
  };
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, JSON.stringify(result, null, 2) + "\n");
  say(`wrote ${out} (${result.durationSec} s)`);
  const missed = rows.filter((r) => verdict(r).startsWith("MISSED"));
  say(missed.length ? `targets missed: ${missed.map((r) => `${r.metric} [${r.via}] ${verdict(r)}`).join("; ")}` : "all targets met");
}

main().catch((e) => {
  console.error(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
