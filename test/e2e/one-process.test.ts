/**
 * One process per sheep on tmux: the pane's own process is pi (no shell, no launcher node above
 * it), tmux keeps the pane when pi ends and tells how it ended, and no secret the sheep carries
 * ever shows in a process list. A real pi shepherd over RPC, real pi sheep on a private tmux
 * server, the scripted model.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { sheepRoot } from "../support/leftovers.ts";
import { type Scene, tmuxPanes, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

/** Every process's command line now, by pid (those we may read). */
async function commandLines(): Promise<Map<number, string>> {
  const lines = new Map<number, string>();
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(`/proc/${name}/cmdline`, "latin1").catch(() => undefined);
    if (text) lines.set(Number(name), text.replaceAll("\0", " "));
  }
  return lines;
}

function childrenOf(pid: number): Promise<number[]> {
  return readFile(`/proc/${pid}/task/${pid}/children`, "utf8").then(
    (t) => t.split(/\s+/).filter(Boolean).map(Number),
    () => [],
  );
}

async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

describe("one process per sheep (tmux)", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let scene: Scene;
  const secret = `sk-shepherd-test-${randomBytes(8).toString("hex")}`;

  before(async () => {
    // A provider key the sheep must carry (it matches *_API_KEY): it may be in environments,
    // never on a command line.
    world = await e2eWorld("one-process", { env: { SHEPHERD_TEST_API_KEY: secret } });
    ({ tmux, model } = world);
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("the carried secret never appears in any process's command line during a start, and the spec holding it is gone once read", async () => {
    let scanning = true;
    let scans = 0;
    const seen: string[] = [];
    let sawLaunch = false;
    const scanner = (async () => {
      while (scanning) {
        for (const line of (await commandLines()).values()) {
          if (line.includes(secret)) seen.push(line);
          if (line.includes(sheepRoot(scene.agentDir))) sawLaunch = true;
        }
        scans++;
      }
    })();
    try {
      const S = await scene.start("secretive");
      assert.equal(existsSync(join(sheepRoot(scene.agentDir), S.agentId, "spec.json")), false, "the spec is deleted once read");
    } finally {
      scanning = false;
      await scanner;
    }
    assert.ok(scans > 3 && sawLaunch, `the scan ran during the start (${scans} scans)`);
    assert.deepEqual(seen, [], "no command line holds the secret");
    // the shepherd itself was given the key, so it is there to leak: only not on a command line
    assert.ok((await readFile(`/proc/${scene.shepherd.proc.pid}/environ`, "latin1")).includes(secret));
  });

  it("the pane's own process is pi: no shell and no second node above it", async () => {
    const S = await scene.start("single");
    const [panePid, serverPid] = (await tmux.tmux(["display-message", "-p", "-t", S.paneId, "#{pane_pid} #{pid}"])).trim().split(" ").map(Number);
    assert.equal(panePid, S.pid, "the pid the sheep reported is the pane's process");
    assert.equal(await parentOf(S.pid), serverPid, "its parent is the tmux server itself");
    // pi asks tmux a few things as it starts (short-lived `tmux show` children); then nothing
    let kids: string[] = [];
    for (let i = 0; i < 100; i++) {
      kids = await Promise.all((await childrenOf(S.pid)).map((k) => readFile(`/proc/${k}/cmdline`, "latin1").catch(() => "")));
      if (kids.every((k) => k === "")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(kids.filter(Boolean), [], "an idle sheep keeps nothing running below pi");
    const cmdline = (await readFile(`/proc/${S.pid}/cmdline`, "latin1")).replaceAll("\0", " ").trim();
    assert.equal(cmdline, `pi ${join(sheepRoot(scene.agentDir), S.agentId)}`, "named pi, beside its sheep's directory");
    await scene.ok({ action: "close", agentId: S.agentId });
  });

  /** Types into the sheep's pane as a person would. */
  const type = async (paneId: string, text: string) => {
    await tmux.tmux(["send-keys", "-t", paneId, "-l", text]);
    await tmux.tmux(["send-keys", "-t", paneId, "Enter"]);
  };
  const untilExited = async (agentId: string) => {
    for (let i = 0; i < 100; i++) {
      const s = (await scene.ok({ action: "status", agentId })).details.status as { state: string; paneAlive: boolean; runtimeStatus?: string };
      // The pid's end can come before tmux collected pi's status: status then says exited, how
      // not yet (the next look says), so this waits for the look that knows how.
      if (s.state === "exited" && s.runtimeStatus !== undefined) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`sheep ${agentId} never exited`);
  };

  it("/quit typed in an idle sheep: status reports exit code 0, the pane keeps pi's last words until closed", async () => {
    const S = await scene.start("quitter");
    await type(S.paneId, "/quit");
    const s = await untilExited(S.agentId);
    assert.deepEqual([s.paneAlive, s.runtimeStatus], [false, "pi exited (exit code 0)"]);
    await scene.fails({ action: "prompt", agentId: S.agentId, message: "still there?" }, /^\[agent_closed\] .*has exited/);
    assert.ok((await tmuxPanes(tmux.socket)()).includes(S.paneId), "the pane stays after pi");
    const screen = ((await scene.ok({ action: "read", target: S.agentId, source: "screen", lines: 5 })).details.text as string).split("\n");
    assert.match(screen.at(-1)!, /^Pane is dead \(status 0, /);
    assert.ok(
      screen.slice(0, -1).some((l) => l.trim() !== ""),
      `pi's own last lines are there above it: ${JSON.stringify(screen)}`,
    );
    await scene.ok({ action: "close", agentId: S.agentId });
    assert.ok(!(await tmuxPanes(tmux.socket)()).includes(S.paneId), "close removed the dead pane");
  });

  it("/quit during a turn: pi aborts the turn on its way out (cancelled), then reports exit code 0", async () => {
    const S = await scene.start("busy quitter");
    const p = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "QUIT" }));
    await untilLogged(model, "QUIT");
    await type(S.paneId, "/quit");
    const r = await scene.wait(p, 60);
    assert.deepEqual([r.status, r.error], ["cancelled", "[cancelled] Request aborted"], JSON.stringify(r));
    assert.equal((await untilExited(S.agentId)).runtimeStatus, "pi exited (exit code 0)");
    await scene.ok({ action: "close", agentId: S.agentId });
  });

  it("pi killed by SIGKILL: the pending wait fails naming the signal, and so does status", async () => {
    const S = await scene.start("killed");
    const p = await scene.prompt(S.agentId, directive({ reply: "never sent", delayMs: 120_000, tag: "KILL9" }));
    await untilLogged(model, "KILL9");
    process.kill(S.pid, "SIGKILL");
    const r = await scene.wait(p, 60);
    assert.equal(r.status, "failed", JSON.stringify(r));
    assert.match(r.error!, /^\[pi_exited\] pi in sheep a_\w+ exited \(signal SIGKILL\) before answering\.$/);
    assert.equal((await untilExited(S.agentId)).runtimeStatus, "pi exited (signal SIGKILL)");
    const screen = (await scene.ok({ action: "read", target: S.agentId, source: "screen", lines: 3 })).details.text as string;
    assert.match(screen, /Pane is dead \(signal 9, /);
    await scene.ok({ action: "close", agentId: S.agentId });
  });

  it("afterwards no pane, sheep pi or sheep file is left", async () => {
    await scene.shepherd.stop();
    await scene.assertNothingLeft(tmuxPanes(tmux.socket), [tmux.userPane]);
  });
});
