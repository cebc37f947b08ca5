/**
 * The panel's terminal under herdr (issue 34), in the bench process: herdr has no output stream,
 * so each open terminal is a poll of the pane's screen (src/runtimes/herdr/pane-terminal.ts) that
 * spawns herdr CLI processes. Here the herdr runtime's own watches run on the fake herdr (its CLI
 * is a node script whose panes are real tmux panes) over idle shells, and only this process's CPU
 * is counted (process.cpuUsage): what the poll costs the shepherd that runs it (spawning,
 * reading, comparing), not what each herdr process costs itself, which the fake's node start
 * would dwarf. Echo: keys typed through sendKeys, timed until the changed screen reaches the sink.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { PaneRef, PaneWatch } from "../../src/ports/runtime.ts";
import { HerdrRuntime } from "../../src/runtimes/herdr/index.ts";
import { createFakeHerdr } from "../../test/support/fake-herdr.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";

export interface HerdrTerminalConfig {
  /** Idle panes, each with a watch open during the CPU window. */
  panes: number;
  /** Time after the watches opened (and after the echo keys) before the window: the poll settles. */
  settleMs: number;
  cpuWindowMs: number;
  /** CPU windows with the watches open; the figure is their median. */
  windows: number;
  /** Keys typed one at a time into one watched pane, each echo timed. */
  keys: number;
  /** The pause before each key: a person between keystrokes, the poll backing off meanwhile. */
  keyGapMs: number;
}

/** childrenMs: the fake herdr processes' own CPU (reaped children), far more than a real herdr's. */
export interface CpuWindow {
  windowMs: number;
  cpuMs: number;
  childrenMs: number;
  herdrCalls?: number;
}

/** This process's CPU (user+system) and its reaped children's over a window of waiting. */
async function cpuWindow(ms: number): Promise<CpuWindow> {
  const a = { at: performance.now(), cpu: process.cpuUsage(), children: procCpu("self").children };
  await sleep(ms);
  const d = process.cpuUsage(a.cpu);
  return { windowMs: performance.now() - a.at, cpuMs: (d.user + d.system) / 1000, childrenMs: procCpu("self").children - a.children };
}

export interface HerdrTerminalFigures {
  /** sendKeys called → the changed screen delivered to the sink. */
  echoMs: number[];
  /** sendKeys returned (the keys are in the pane) → the changed screen delivered. */
  afterKeysMs: number[];
  /** One lone fake herdr call (`pane get`), for scale: the fake's node start is most of it. */
  callMs: number[];
  /** Keys whose sendKeys failed (a call past its deadline): not timed. */
  failedKeys: number;
  /** Watches that ended (five failed reads in a row: a fake too swamped to answer within the deadline). */
  ended: string[];
  cpu: { watches: number; windows: CpuWindow[]; baseline: CpuWindow };
}

export async function runHerdrTerminal(cfg: HerdrTerminalConfig, say: (s: string) => void): Promise<HerdrTerminalFigures> {
  const fake = await createFakeHerdr();
  const tmp = await mkdtemp(path.join(os.tmpdir(), "bench-herdr-term-"));
  const watches: PaneWatch[] = [];
  try {
    const panes: PaneRef[] = [];
    for (let i = 0; i < cfg.panes; i++) {
      const r = await fake.herdr(["workspace", "create", "--cwd", tmp, "--label", `t${i + 1}`, "--no-focus"]);
      if (r.exitCode !== 0) throw new Error(`fake herdr workspace create: ${r.stderr}`);
      const paneId = (JSON.parse(r.stdout) as { result: { root_pane: { pane_id: string } } }).result.root_pane.pane_id;
      const agentId = `a_${String(i).padStart(10, "0")}`;
      const named = await fake.herdr(["pane", "rename", paneId, `t${i + 1} [${agentId}]`]);
      if (named.exitCode !== 0) throw new Error(`fake herdr pane rename: ${named.stderr}`);
      panes.push({ paneId, agentId });
    }
    const runtime = new HerdrRuntime({ env: fake.env, bin: fake.bin });

    const callMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await fake.herdr(["pane", "get", panes[0]!.paneId]);
      if (r.exitCode !== 0) throw new Error(`fake herdr pane get: ${r.stderr}`);
      callMs.push(performance.now() - t0);
    }

    // The same process with no watch open: what a window shows of the process itself on a loaded machine.
    const baseline = await cpuWindow(cfg.cpuWindowMs);
    say(`  herdr terminal: ${cfg.panes} watches on idle shells (fake herdr), key echo into one`);
    let screen = "";
    let echoed: (() => void) | undefined;
    let want = "";
    const ended: string[] = [];
    for (const [i, pane] of panes.entries()) {
      const sink = {
        output: (chunk: Buffer) => {
          if (i !== 0) return;
          screen = chunk.toString("utf8");
          if (want && screen.includes(want)) echoed?.();
        },
        end: (why: string) => ended.push(`${pane.paneId}: ${why}`),
      };
      // The first read and mark of a pane: retried, as a page retries, when a swamped fake answers late.
      for (let attempt = 1; ; attempt++) {
        try {
          watches.push(await runtime.watch(pane, sink));
          break;
        } catch (e) {
          if (attempt === 3) throw e;
          say(`  herdr terminal: opening ${pane.paneId}'s watch failed, again: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    }
    say(`  herdr terminal: this process's CPU with ${cfg.panes} watches open on idle panes (${cfg.windows} windows of ${cfg.cpuWindowMs / 1000} s)`);
    await sleep(cfg.settleMs);
    const windows: CpuWindow[] = [];
    for (let i = 0; i < cfg.windows; i++) {
      const callsBefore = (await fake.calls()).length;
      windows.push({ ...(await cpuWindow(cfg.cpuWindowMs)), herdrCalls: (await fake.calls()).length - callsBefore });
    }
    say(`  herdr terminal: key echo into one of the ${cfg.panes} watched panes, ${cfg.keys} keys`);
    // A shell's prompt, then the start of a line the keys complete; nothing runs.
    const prefix = ": echo-";
    let typed = prefix;
    await runtime.sendKeys(panes[0]!, typed);
    const echoMs: number[] = [];
    const afterKeysMs: number[] = [];
    let failedKeys = 0;
    const letters = "qwertyuiopasdfghjklzxcvbnm";
    for (let k = 0; k < cfg.keys; k++) {
      await sleep(cfg.keyGapMs);
      typed += letters[k % letters.length];
      want = typed;
      const drawn = new Promise<number>((resolve) => {
        echoed = () => resolve(performance.now());
      });
      const t0 = performance.now();
      try {
        await runtime.sendKeys(panes[0]!, typed.at(-1)!);
      } catch (e) {
        // A call past its deadline on a swamped machine: the key may or may not be in; the line starts again.
        say(`  herdr terminal: a key failed: ${e instanceof Error ? e.message : String(e)}`);
        failedKeys++;
        want = "";
        typed = prefix;
        await sleep(1000);
        await runtime.sendKeys(panes[0]!, `\x15${prefix}`);
        continue;
      }
      const t1 = performance.now();
      const t2 = await Promise.race([drawn, sleep(10_000).then(() => undefined)]);
      if (t2 === undefined) throw new Error(`herdr terminal: "${typed}" never reached the sink`);
      echoed = undefined;
      echoMs.push(t2 - t0);
      afterKeysMs.push(t2 - t1);
    }
    // The line is left unrun.
    await runtime.sendKeys(panes[0]!, "\x15");

    return {
      echoMs,
      afterKeysMs,
      callMs,
      failedKeys,
      ended,
      cpu: { watches: watches.length, windows, baseline },
    };
  } finally {
    for (const w of watches) w.close();
    // A read under way still ends (within its 3 s deadline) and would race the fake's removal.
    if (watches.length) await sleep(3000);
    await fake.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
}
