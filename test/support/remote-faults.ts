/**
 * The remote fault scenarios' shared steps (remote-faults, remote-link-down): a remote world whose
 * keepalives notice a dead link in seconds, a sheep on the host, a wait held open while a fault is
 * done to the link or the host, and the checks that the answer arrived once.
 */
import assert from "node:assert/strict";
import type { RemoteHost } from "./remote-host.ts";
import { type RemoteWorld, remoteWorld } from "./remote-world.ts";
import type { RpcShepherd, ToolOutcome } from "./rpc-shepherd.ts";
import { type Item, type Scene, untilLogged } from "./scene.ts";
import { directive, type ScriptedModel } from "./scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FaultWorld {
  rw: RemoteWorld;
  remote: RemoteHost;
  model: ScriptedModel;
  scene: Scene;
  shepherd: RpcShepherd;
  /** The sheep the steps use: the last one `fresh` started. */
  readonly sheep: string;
  /** A new idle sheep on the host for each part: what an earlier part left working never blocks the next. */
  fresh(label: string): Promise<void>;
  /**
   * Prompts the sheep with a reply the model holds back for delayMs, waits for it in one tool call
   * and, once the sheep's request reached the model, runs the fault; returns the wait's outcome.
   */
  waitThrough(tag: string, delayMs: number, fault: () => Promise<void>): Promise<{ promptId: string; outcome: ToolOutcome; item: Item }>;
  /** Until the shepherd reaches the host again (it reconnects by itself): each part begins on a link that is up. */
  untilReachable(): Promise<void>;
  /** The answer arrived once: completed with its text, the prompt never sent twice, a second wait says the same. */
  arrivedOnce(tag: string, promptId: string, item: Item): Promise<void>;
}

export async function faultWorld(name: string): Promise<FaultWorld> {
  // Keepalives of 2 s × 3: a dead link is noticed in seconds, as a person on a flaky link would set them.
  const rw = await remoteWorld(name, { host: { sshOptions: ["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3"] } });
  const { remote } = rw;
  const model = rw.world.model;
  const scene = rw.world.scene();
  const shepherd = scene.shepherd;
  let sheep = "";
  const w: FaultWorld = {
    rw,
    remote,
    model,
    scene,
    shepherd,
    get sheep() {
      return sheep;
    },
    fresh: async (label) => {
      sheep = ((await scene.ok({ action: "start", agent: "echo", label, host: "box" })).details.agent as { agentId: string }).agentId;
    },
    waitThrough: async (tag, delayMs, fault) => {
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
    },
    untilReachable: async () => {
      let last = "";
      for (let i = 0; i < 60; i++) {
        const r = await shepherd.call({ action: "status", agentId: sheep });
        last = r.text;
        if (!r.isError && !/unreachable/.test(r.text) && (await remote.loggedIn()) === 1) return;
        await sleep(1_500);
      }
      assert.fail(`the shepherd never reached the host again: ${last}`);
    },
    arrivedOnce: async (tag, promptId, item) => {
      assert.deepEqual([item.promptId, item.status, item.text], [promptId, "completed", `answer ${tag}`], JSON.stringify(item));
      assert.equal(model.log.filter((l) => l.tag === tag).length, 1, "the prompt reached the model once");
      const again = await scene.wait(promptId, 10);
      assert.deepEqual([again.status, again.text], ["completed", `answer ${tag}`]);
      assert.equal(await remote.loggedIn(), 1, "one connection again");
    },
  };
  await w.fresh("steady");
  return w;
}
