/**
 * A real pi shepherd run the way a person runs pi outside tmux: no TMUX in its environment, the
 * tmux runtime on a socket where no server runs yet. The shepherd starts the server for its
 * first sheep, and the server ends when the last sheep closes; the next server numbers panes
 * from %0 again, so a pane id the shepherd saw die comes back for a new sheep.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { e2eWorld } from "../support/e2e-world.ts";
import { tmuxPanes } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

type DelegateItem = { agent: string; status: string; text?: string; error?: string };

/** One shepherd, model and socket per test: no test inherits another's tmux server or shepherd state. */
async function outsideTmux(t: TestContext, shepherdSettings?: Record<string, unknown>) {
  // No warm pool (warmMemory 0): the server goes with the last sheep, and a delegated sheep does not come back to keep it.
  const world = await e2eWorld("outside", { tmux: "socket", work: true, agent: { shepherdSettings: { warmMemory: 0, ...shepherdSettings } } });
  t.after(() => world.cleanup());
  const { tmux: sock, model, env } = world;
  // shepherdEnv drops TMUX and TMUX_PANE: the shepherd is not inside any tmux.
  assert.equal(env.TMUX, undefined);
  assert.equal(env.TMUX_PANE, undefined);
  assert.equal(await sock.serverRunning(), false, "no tmux server runs before the shepherd starts one");
  const scene = world.scene();
  /** What every test ends with: no sheep pi, no pane, no tmux server on the socket. */
  const assertNothingLeft = async () => {
    await scene.assertNothingLeft(tmuxPanes(sock.socket), []);
    assert.equal(await sock.serverGone(), true, "the tmux server ended with its last sheep");
  };
  return { scene, sock, model, assertNothingLeft };
}

describe("outside tmux: the shepherd's tmux server comes and goes with its sheep", { timeout: 900_000 }, () => {
  it("start, prompt, wait, close: the same thing three times, each on a fresh server", { timeout: 300_000 }, async (t) => {
    const { scene, sock, assertNothingLeft } = await outsideTmux(t);
    const panes: string[] = [];
    for (const n of [1, 2, 3]) {
      const sheep = await scene.start(`round ${n}`);
      panes.push(sheep.paneId);
      const promptId = await scene.prompt(sheep.agentId, directive({ reply: `answer ${n}`, tag: `R${n}` }));
      const r = await scene.wait(promptId, 60);
      assert.deepEqual([r.status, r.text], ["completed", `answer ${n}`], `round ${n}: ${r.error ?? ""}`);
      // The server the shepherd started has the keys pi asks for: no sheep shows pi's tmux warning.
      const screen = String((await scene.ok({ action: "read", target: sheep.agentId, source: "screen", lines: 200 })).details.text);
      assert.ok(screen.includes(`answer ${n}`), screen);
      assert.doesNotMatch(screen, /extended-keys is off/, screen);
      const closed = (await scene.ok({ action: "close", agentId: sheep.agentId })).details.closed as { alreadyClosed: boolean; cancelledPromptIds: string[] };
      assert.deepEqual([closed.alreadyClosed, closed.cancelledPromptIds], [false, []]);
      assert.equal(await sock.serverGone(), true, `round ${n}: the tmux server ended when its only sheep closed`);
      await assert.rejects(sock.tmux(["list-sessions"]), `round ${n}: list-sessions fails: no server`);
    }
    // The point of the scenario: every round's pane had the id an earlier, dead pane had.
    assert.deepEqual(panes, ["%0", "%0", "%0"]);
    await assertNothingLeft();
  });

  it("two single delegates in a row both complete", { timeout: 300_000 }, async (t) => {
    const { scene, sock, assertNothingLeft } = await outsideTmux(t);
    for (const n of [1, 2]) {
      const r = await scene.shepherd.call({ action: "delegate", agent: "echo", task: directive({ reply: `delegated ${n}`, tag: `D${n}` }) });
      assert.equal(r.isError, false, `delegate ${n} failed: ${r.text}`);
      assert.equal(r.text, `delegated ${n}`);
      const items = r.details.results as DelegateItem[];
      assert.deepEqual(
        items.map((i) => [i.agent, i.status, i.text]),
        [["echo", "completed", `delegated ${n}`]],
      );
      assert.equal(await sock.serverGone(), true, `delegate ${n}: the tmux server ended with the delegated sheep`);
    }
    await assertNothingLeft();
  });

  it("a parallel delegate of 3 tasks with maxParallel 1 runs them one after another and loses none", { timeout: 300_000 }, async (t) => {
    const { scene, model, assertNothingLeft } = await outsideTmux(t, { maxParallel: 1 });
    const tasks = [1, 2, 3].map((i) => ({ agent: "echo", task: directive({ reply: `result ${i}`, tag: `P${i}` }) }));
    const r = await scene.shepherd.call({ action: "delegate", tasks });
    assert.equal(r.isError, false, `delegate failed: ${r.text}`);
    assert.equal(r.details.mode, "parallel");
    const items = r.details.results as DelegateItem[];
    assert.deepEqual(
      items.map((i) => [i.agent, i.status, i.text, i.error]),
      [1, 2, 3].map((i) => ["echo", "completed", `result ${i}`, undefined]),
    );
    assert.match(r.text, /^Parallel: 3\/3 succeeded\./);
    // One at a time: each sheep's model call began after the previous one had answered. A sheep
    // is closed before the next starts, so the server ends between tasks.
    const reqs = ["P1", "P2", "P3"].map((tag) => model.log.filter((l) => l.tag === tag));
    assert.deepEqual(
      reqs.map((l) => l.length),
      [1, 1, 1],
      "each task reached the model exactly once",
    );
    const [p1, p2, p3] = reqs.map((l) => l[0]!);
    assert.ok(p1!.lastByteAt! <= p2!.receivedAt && p2!.lastByteAt! <= p3!.receivedAt, "the tasks ran one after another");
    await assertNothingLeft();
  });
});
