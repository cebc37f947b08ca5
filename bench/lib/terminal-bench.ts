/**
 * The panel's terminal (issue 34), tmux only. On a real pi shepherd in RPC mode with real pi sheep
 * and the panel on: a key typed in a sheep's terminal in a real headless chromium, from its keydown
 * to the character drawn by xterm in the page (through POST …/terminal, tmux's send-keys, pi's editor,
 * the pane's pipe and the stream); and the shepherd's CPU with sixteen terminal streams open on idle
 * sheep (opened from the bench process, each as a page opens it).
 */
import { panelOn } from "./panel-on.ts";
import { request } from "node:http";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sheepDir } from "../../src/protocol/layout.ts";
import { launchChromium, openPage } from "../../test/support/panel-browser.ts";
import { RpcShepherd } from "../../test/support/rpc-shepherd.ts";
import { sleep } from "./clock.ts";
import { procCpu } from "./cpu.ts";
import { untilGone } from "./files.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import type { World } from "./world.ts";

export interface TerminalConfig {
  /** Real sheep, each with a terminal stream open during the CPU window. */
  sheep: number;
  /** Keys typed one at a time, each echo timed. */
  keys: number;
  cpuWindowMs: number;
}

export interface TerminalFigures {
  echoMs: number[];
  cpu: { terminals: number; windowMs: number; cpuMs: number; bytes: number };
}

export async function runTerminal(fixture: RuntimeFixture, world: World, cfg: TerminalConfig, say: (s: string) => void): Promise<TerminalFigures> {
  const env = { ...world.env, ...fixture.env };
  const rpc = RpcShepherd.start({ cwd: world.work, env, extension: null });
  const pids: number[] = [];
  const streams: { destroy(): void }[] = [];
  try {
    say(`  terminal: ${cfg.sheep} sheep on a real pi shepherd with the panel on`);
    const ids: string[] = [];
    for (let i = 0; i < cfg.sheep; i++) {
      const r = await rpc.ok({ action: "start", agent: world.definition.name, label: `t${i + 1}` });
      const agentId = (r.details.agent as { agentId: string }).agentId;
      ids.push(agentId);
      pids.push((JSON.parse(await readFile(join(sheepDir(world.agentDir, agentId), "status.json"), "utf8")) as { pid: number }).pid);
    }
    const { port, token } = await panelOn(rpc);

    say(`  terminal: key echo in the page, ${cfg.keys} keys into ${ids[0]}'s pi editor (headless chromium)`);
    const browser = await launchChromium();
    let echoMs: number[];
    try {
      const { page } = await openPage(browser);
      await page.goto(`http://127.0.0.1:${port}/#token=${token}`);
      await page.goto(`http://127.0.0.1:${port}/#/sheep/${ids[0]}`);
      await page.locator('.term-screen[data-state="live"]').waitFor({ timeout: 30_000 });
      await page.locator("#term-typing").check();
      await page.evaluate(() => {
        const w = window as unknown as { __t0?: number | undefined; __want: string; __echo: number[] };
        w.__echo = [];
        w.__want = "";
        const rows = document.querySelector(".term-screen .xterm-rows")!;
        document.addEventListener("keydown", () => (w.__t0 = performance.now()), true);
        new MutationObserver(() => {
          if (w.__t0 !== undefined && w.__want && (rows.textContent ?? "").includes(w.__want)) {
            w.__echo.push(performance.now() - w.__t0);
            w.__t0 = undefined;
          }
        }).observe(rows, { subtree: true, childList: true, characterData: true });
      });
      const letters = "qwertyuiopasdfghjklzxcvbnm";
      let typed = "echo";
      await page.keyboard.type(typed);
      await sleep(500);
      for (let i = 0; i < cfg.keys; i++) {
        typed += letters[i % letters.length];
        await page.evaluate((want) => {
          (window as unknown as { __want: string }).__want = want;
        }, typed);
        await page.keyboard.press(typed.at(-1)!);
        const deadline = Date.now() + 5000;
        while ((await page.evaluate(() => (window as unknown as { __echo: number[] }).__echo.length)) <= i) {
          if (Date.now() > deadline) throw new Error(`terminal echo: "${typed}" never drawn`);
          await sleep(5);
        }
        await sleep(50);
      }
      echoMs = await page.evaluate(() => (window as unknown as { __echo: number[] }).__echo);
      // Out of pi's editor again: the sheep stays idle for the CPU window.
      await page.keyboard.press("Control+U");
    } finally {
      await browser.close();
    }

    say(`  terminal: the shepherd's CPU with ${ids.length} terminals open on idle sheep (${cfg.cpuWindowMs / 1000} s window)`);
    let bytes = 0;
    for (const agentId of ids) {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port, path: `/api/v1/sheep/${agentId}/terminal`, headers: { authorization: `Bearer ${token}` }, agent: false },
          (res) => {
            if (res.statusCode !== 200) reject(new Error(`terminal stream: ${res.statusCode}`));
            res.on("data", (c: Buffer) => {
              bytes += c.length;
            });
            resolve();
          },
        );
        req.on("error", reject);
        req.end();
        streams.push(req);
      });
    }
    await sleep(2000);
    const pid = rpc.proc.pid!;
    const b0 = bytes;
    const a = { at: performance.now(), cpu: procCpu(pid).own };
    await sleep(cfg.cpuWindowMs);
    const b = { at: performance.now(), cpu: procCpu(pid).own };
    return { echoMs, cpu: { terminals: streams.length, windowMs: b.at - a.at, cpuMs: b.cpu - a.cpu, bytes: bytes - b0 } };
  } finally {
    for (const s of streams) s.destroy();
    await rpc.stop().catch(() => undefined);
    await Promise.all(pids.map((p) => untilGone(p)));
  }
}
