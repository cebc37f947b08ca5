/**
 * The warm pool with a real pi shepherd over RPC and real pi sheep in a private tmux server:
 * a matching start takes a ready sheep that never spoke to the model, a start that does not
 * match boots its own, a pool sheep killed from outside is replaced and never handed out, and
 * quitting the shepherd leaves no pool sheep running.
 */
import assert from "node:assert/strict";
import { readFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { pidRunning } from "../../src/protocol/pid.ts";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { killSheep, livingSheep, pidAlive, sheepFiles, sheepPid } from "../support/leftovers.ts";
import type { Scene } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the warm pool with real pi", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let agentDir: string;
  let work: string;
  let scene: Scene;
  const poolPids: number[] = [];

  /** The pool's sheep as the shepherd's state file records them (they are in no view). */
  const warmIds = async () => {
    // Not there before the shepherd's first write.
    const text = await readFile(join(agentDir, "pi-shepherd", "state.json"), "utf8").catch(() => '{"agents": []}');
    const state = JSON.parse(text) as { agents: { agentId: string; warm?: true; state: string }[] };
    return state.agents.filter((a) => a.warm && a.state === "idle").map((a) => a.agentId);
  };
  /** Polls the herd action until the pool holds `n` ready echo sheep, as the state file says too. */
  const poolReady = async (n: number) => {
    for (let i = 0; i < 240; i++) {
      const r = await scene.ok({ action: "herd" });
      const warm = r.details.warm as Record<string, { ready: number; starting: number }> | undefined;
      if (warm?.echo?.ready === n && warm.echo.starting === 0 && (await warmIds()).length === n) return r;
      await sleep(250);
    }
    assert.fail(`the pool never held ${n} ready echo sheep`);
  };
  /** What sheep asked the model (the shepherd's own turns, which drive the tool, are not theirs). */
  const sheepRequests = () => model.log.filter((l) => l.system.includes("You answer exactly as scripted."));
  const remember = async (ids: string[]) => {
    for (const id of ids) poolPids.push(await sheepPid(agentDir, id).catch(() => 0));
  };

  before(async () => {
    world = await e2eWorld("warm-e2e", { agent: { agents: { "echo.md": ECHO_AGENT }, shepherdSettings: { warm: { echo: 2 } } }, work: true });
    ({ tmux, model, agentDir, cwd: work } = world);
    await mkdir(join(work, "sub"));
    // The pool's sheep are in no view, so no scene knows their pids: killed after the shepherd stopped.
    world.defer(() =>
      killSheep(
        agentDir,
        poolPids.filter((p) => p > 0),
      ),
    );
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("fills in the background, shows its count in the widget and under the herd, and its sheep never speak to the model", async () => {
    // No tool call yet: the pool fills on its own, and the widget follows it.
    for (let i = 0; i < 240 && (await warmIds()).length < 2; i++) await sleep(250);
    const widget = async () => {
      for (let i = 0; i < 40; i++) {
        const sets = scene.shepherd.events.filter((e) => e.type === "extension_ui_request" && e.method === "setWidget") as { widgetLines?: string[] }[];
        const last = sets[sets.length - 1]?.widgetLines;
        if (last?.[0] === "🐑 herd (0) · warm: echo 2") return last;
        await sleep(250);
      }
      assert.fail("the widget never counted the pool");
    };
    assert.deepEqual(await widget(), ["🐑 herd (0) · warm: echo 2"]);
    const herd = await poolReady(2);
    assert.deepEqual(herd.details.agents, [], "warm sheep are not in the herd");
    assert.match(herd.text, /Warm pool \(not in the herd; a matching start takes one\): echo 2\./);
    await remember(await warmIds());
    assert.deepEqual(sheepRequests(), [], "a warm sheep sent nothing to the model");
  });

  it("a matching start takes a warm sheep: named after its label, and its first request is its first prompt", async () => {
    const before = await warmIds();
    const started = await scene.start("alpha");
    assert.ok(before.includes(started.agentId), `the start took a warm sheep (${started.agentId} of ${before.join(", ")})`);
    const windows = (await execa("tmux", ["-S", tmux.socket, "list-panes", "-a", "-F", "#{pane_id} #{window_name}"])).stdout.split("\n");
    assert.ok(windows.includes(`${started.paneId} alpha`), `its window is named after its label:\n${windows.join("\n")}`);
    assert.deepEqual(sheepRequests(), [], "still nothing reached the model before the first prompt");
    const item = await scene.wait(await scene.prompt(started.agentId, directive({ reply: "warm hello", tag: "W1" })), 60);
    assert.equal(item.status, "completed", item.error);
    assert.equal(item.text, "warm hello");
    assert.deepEqual(
      sheepRequests().map((l) => l.tag),
      ["W1"],
      "the prompt was the sheep's first request",
    );
    await poolReady(2); // refilled behind it
    await remember(await warmIds());
  });

  it("a start that does not match (another cwd) boots a sheep of its own and leaves the pool alone", async () => {
    const before = await warmIds();
    const cold = await scene.start("beta", { cwd: join(work, "sub") });
    assert.ok(!before.includes(cold.agentId), "a new sheep, not a warm one");
    assert.deepEqual((await warmIds()).sort(), [...before].sort(), "the pool kept its sheep");
    await scene.ok({ action: "close", agentId: cold.agentId });
  });

  it("a pool sheep killed from outside is replaced, never handed out", async () => {
    const [victim, other] = await warmIds();
    assert.ok(victim && other);
    const pid = await sheepPid(agentDir, victim);
    process.kill(pid, "SIGKILL");
    // Dead as far as the system can tell (a zombie tmux has not reaped yet counts as dead): a pi on
    // a loaded machine may take a while to be scheduled and die, and before that nobody can know.
    for (let i = 0; i < 1000 && pidRunning(pid); i++) await sleep(10);
    assert.ok(!pidRunning(pid), "the killed pi ended");
    const started = await scene.start("gamma");
    assert.notEqual(started.agentId, victim, "the dead sheep was not handed out");
    const item = await scene.wait(await scene.prompt(started.agentId, directive({ reply: "alive", tag: "G1" })), 60);
    assert.equal(item.text, "alive", item.error);
    await poolReady(2);
    assert.ok(!(await warmIds()).includes(victim), "the dead one left the pool");
    assert.ok(!(await sheepFiles(agentDir)).some((f) => f.startsWith(`${victim}/`)), "and its files are gone");
    await remember(await warmIds());
  });

  it("quitting the shepherd closes the pool: no pool sheep runs after it", async () => {
    const pool = await warmIds();
    const pids = await Promise.all(pool.map((id) => sheepPid(agentDir, id)));
    assert.ok(pids.every(pidAlive));
    await scene.shepherd.stop();
    assert.deepEqual(await livingSheep(agentDir, [...pids, ...scene.pids]), [], "no sheep pi is alive");
    const files = await sheepFiles(agentDir);
    for (const id of pool) assert.ok(!files.some((f) => f.startsWith(`${id}/`)), `nothing of pool sheep ${id} is kept`);
  });
});
