/**
 * Faults of the connection and of the remote host, with real OpenSSH and real pi sheep on the
 * test's remote host (test/support/remote-host.ts), nothing lost (issue 24): the ControlMaster
 * killed mid-wait, sshd restarted mid-wait: the sheep keeps working under the remote tmux, the
 * shepherd reconnects, the answer arrives once. The remote tmux server killed: the wait fails
 * [pane_gone] or [pi_exited], nothing hangs; then nothing of ours is left on either side.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { RemoteHost } from "../support/remote-host.ts";
import { assertNothingLeftRemote, type RemoteWorld, remoteWorld } from "../support/remote-world.ts";
import type { RpcShepherd, ToolOutcome } from "../support/rpc-shepherd.ts";
import { type Item, type Scene, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("remote sheep through network and host faults", { timeout: 900_000 }, () => {
  let rw: RemoteWorld;
  let remote: RemoteHost;
  let model: ScriptedModel;
  let scene: Scene;
  let shepherd: RpcShepherd;
  let sheep: string;

  const ok = (args: unknown) => scene.ok(args);

  /**
   * Prompts the sheep with a reply the model holds back for delayMs, waits for it in one tool call
   * and, once the sheep's request reached the model, runs the fault; returns the wait's outcome.
   */
  const waitThrough = async (tag: string, delayMs: number, fault: () => Promise<void>): Promise<{ promptId: string; outcome: ToolOutcome; item: Item }> => {
    const promptId = await scene.prompt(sheep, directive({ reply: `answer ${tag}`, delayMs, tag }));
    const [outcome] = await shepherd.callParallel([{ action: "wait", promptId, timeout: 300 }], {
      timeoutMs: 400_000,
      whileRunning: async () => {
        await untilLogged(model, tag);
        await fault();
      },
    });
    assert.equal(outcome!.isError, false, outcome!.text);
    return { promptId, outcome: outcome!, item: (outcome!.details.results as Item[])[0]! };
  };

  /** A new idle sheep on the host for each part: what an earlier part left working never blocks the next. */
  const fresh = async (label: string) => {
    sheep = ((await ok({ action: "start", agent: "echo", label, host: "box" })).details.agent as { agentId: string }).agentId;
  };

  /** Until the shepherd reaches the host again (it reconnects by itself): each part begins on a link that is up. */
  const untilReachable = async () => {
    let last = "";
    for (let i = 0; i < 60; i++) {
      const r = await shepherd.call({ action: "status", agentId: sheep });
      last = r.text;
      if (!r.isError && !/unreachable/.test(r.text) && (await remote.loggedIn()) === 1) return;
      await sleep(1_500);
    }
    assert.fail(`the shepherd never reached the host again: ${last}`);
  };

  /** The answer arrived once: completed with its text, the prompt never sent twice, a second wait says the same. */
  const arrivedOnce = async (tag: string, promptId: string, item: Item) => {
    assert.deepEqual([item.promptId, item.status, item.text], [promptId, "completed", `answer ${tag}`], JSON.stringify(item));
    assert.equal(model.log.filter((l) => l.tag === tag).length, 1, "the prompt reached the model once");
    const again = await scene.wait(promptId, 10);
    assert.deepEqual([again.status, again.text], ["completed", `answer ${tag}`]);
    assert.equal(await remote.loggedIn(), 1, "one connection again");
  };

  before(async () => {
    // Keepalives of 2 s × 3: a dead link is noticed in seconds, as a person on a flaky link would set them.
    rw = await remoteWorld("remote-faults", { host: { sshOptions: ["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3"] } });
    ({ remote } = rw);
    model = rw.world.model;
    scene = rw.world.scene();
    shepherd = scene.shepherd;
    sheep = ((await ok({ action: "start", agent: "echo", label: "steady", host: "box" })).details.agent as { agentId: string }).agentId;
  });

  after(() => rw?.world.cleanup());

  it("the ControlMaster killed mid-wait: the shepherd reconnects and the answer arrives once", async () => {
    await untilReachable();
    await fresh("master");
    const { promptId, item } = await waitThrough("MASTER", 6_000, async () => {
      const masters = remote.localSsh().filter((p) => {
        const argv = readFileSync(`/proc/${p}/cmdline`, "latin1").split("\0");
        return argv.some((a) => /^-M+$|ControlMaster=(yes|auto|autoask)/i.test(a));
      });
      assert.ok(
        masters.length > 0,
        `a ControlMaster among ${remote.localSsh().map((p) => readFileSync(`/proc/${p}/cmdline`, "latin1").replaceAll("\0", " "))}`,
      );
      for (const pid of masters) process.kill(pid, "SIGKILL");
    });
    await arrivedOnce("MASTER", promptId, item);
  });

  it("sshd restarted mid-wait, its connections dropped: the shepherd reconnects and the answer arrives once", async () => {
    await untilReachable();
    await fresh("sshd");
    const { promptId, item } = await waitThrough("SSHD", 6_000, () => remote.restartSshd({ dropConnections: true }));
    await arrivedOnce("SSHD", promptId, item);
  });

  it("the remote tmux server killed mid-wait: the wait fails [pane_gone] or [pi_exited], nothing hangs", async () => {
    await untilReachable();
    await fresh("tmux");
    const { item } = await waitThrough("TMUX", 60_000, async () => {
      const killed = await remote.killTmux();
      assert.ok(killed.length > 0, "a remote tmux server was killed");
    });
    assert.equal(item.status, "failed", JSON.stringify(item));
    assert.match(item.error!, /^\[(pane_gone|pi_exited)\] /);
    await ok({ action: "prune" });
    await shepherd.stop();
    await assertNothingLeftRemote(rw, { shepherdsStopped: true });
  });
});
