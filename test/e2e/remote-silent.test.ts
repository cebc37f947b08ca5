/**
 * A remote host that stops answering holds up nothing else (issue 31, item 4), with a real pi
 * shepherd, a real local sheep and a real sheep on the test's remote host (real sshd in a network
 * namespace): one local and one remote sheep, each with a prompt pending; the local sheep's pi
 * killed; the host made silent, first by its agent stopped (SIGSTOP, its ssh connection up), then
 * by its link cut. In one turn a local wait, a local status, herd and the remote wait (each wait
 * 15 s): the local wait says the sheep died ([pi_exited]) before the remote wait's own timeout,
 * status and herd answer (the remote sheep shown as last known), the remote wait ends at its own
 * timeout. An RPC abort ends a remote wait long before its timeout, and closing the shepherd's
 * stdin ends the shepherd before a pending wait's timeout. How long each took belongs to the
 * bench; here only outcomes and order.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { RemoteHost } from "../support/remote-host.ts";
import { type RemoteWorld, remoteWorld } from "../support/remote-world.ts";
import type { RpcShepherd, ToolOutcome } from "../support/rpc-shepherd.ts";
import { type Item, type Scene, untilLogged } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
  } catch {
    return [];
  }
}

/**
 * The shepherd's agent on the remote host: found in the process tree of sshd's sessions (by the
 * pids they have, never by a process name), the one running the deployed agent.mjs.
 */
async function remoteAgents(remote: RemoteHost): Promise<number[]> {
  const tree = new Set(await remote.sessions());
  const all = readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      const parent = ppidOf(p);
      if (parent !== undefined && tree.has(parent) && !tree.has(p)) {
        tree.add(p);
        grew = true;
      }
    }
  }
  return [...tree].filter((p) => argvOf(p).some((a) => a.endsWith("/agent.mjs")));
}

/** Everything the test stopped, continued again at the end (the world's cleanup then ends it by pid). */
const stopped = new Set<number>();
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Silence = "stopped" | "cut";

function silentHost(how: Silence) {
  describe(`a host whose ${how === "stopped" ? "agent is stopped (its connection up)" : "link is cut"} holds up nothing else`, { timeout: 600_000 }, () => {
    // The host's ssh options as a person leaves them (keepalives 10 s × 3): a cut link goes
    // unnoticed by ssh for longer than the waits' own timeouts.
    let f: { rw: RemoteWorld; remote: RemoteHost; model: RemoteWorld["world"]["model"]; scene: Scene; shepherd: RpcShepherd };
    let localPrompt = "";
    let remotePrompt = "";
    let far = "";
    let near = "";

    /** The host silent: every agent of the shepherd there stopped (a restarted one too), or the link down. */
    const silence = async () => {
      if (how === "cut") return f.remote.cut();
      const agents = await remoteAgents(f.remote);
      assert.ok(agents.length > 0, "the shepherd's agent runs on the remote host");
      for (const pid of agents) {
        stopped.add(pid);
        signal(pid, "SIGSTOP");
      }
    };

    before(async () => {
      const rw = await remoteWorld(`remote-silent-${how}`);
      const scene = rw.world.scene();
      f = { rw, remote: rw.remote, model: rw.world.model, scene, shepherd: scene.shepherd };
      far = ((await scene.ok({ action: "start", agent: "echo", label: "far", host: "box" })).details.agent as { agentId: string }).agentId;
      const local = await f.scene.start("near");
      near = local.agentId;
      localPrompt = await f.scene.prompt(near, directive({ reply: "never here", delayMs: 300_000, tag: `NEAR-${how}` }));
      remotePrompt = await f.scene.prompt(far, directive({ reply: "never there", delayMs: 300_000, tag: `FAR-${how}` }));
      await untilLogged(f.model, `NEAR-${how}`);
      await untilLogged(f.model, `FAR-${how}`);
      await silence();
      process.kill(local.pid, "SIGKILL");
      // tmux may miss the SIGCHLD of a pi killed a moment ago (it then collects it at its next child's
      // end, seconds later or never) and shows it running meanwhile: the shepherd finds it dead by its
      // pid. The calls below start once the shepherd says so, whatever tmux does.
      let said = "";
      for (let i = 0; i < 150 && !/exited/.test(said); i++) {
        said = (await f.shepherd.call({ action: "status", agentId: near })).text;
        if (!/exited/.test(said)) await sleep(200);
      }
      assert.match(said, /exited/, "the shepherd found its killed local sheep dead");
    });

    after(async () => {
      if (how === "cut") await f?.remote.restore().catch(() => undefined);
      for (const pid of stopped) signal(pid, "SIGCONT");
      stopped.clear();
      await f?.rw.world.cleanup();
    });

    it("a local wait says the sheep died before the remote wait's own timeout; status and herd answer; the remote wait ends at its timeout", async () => {
      const [localWait, localStatus, herd, remoteStatus, remoteWait] = await f.shepherd.callParallel(
        [
          { action: "wait", promptId: localPrompt, timeout: 15 },
          { action: "status", agentId: near },
          { action: "herd" },
          { action: "status", agentId: far },
          { action: "wait", promptId: remotePrompt, timeout: 15 },
        ],
        { timeoutMs: 120_000 },
      );
      const item = (o: ToolOutcome) => (o.details.results as Item[])[0]!;
      assert.equal(localWait!.isError, false, localWait!.text);
      assert.equal(item(localWait!).status, "failed", JSON.stringify(item(localWait!)));
      assert.match(item(localWait!).error ?? "", /^\[pi_exited\] /);
      assert.equal(localStatus!.isError, false, localStatus!.text);
      assert.match(localStatus!.text, /exited/);
      assert.equal(herd!.isError, false, herd!.text);
      const agents = herd!.details.agents as { agentId: string; state: string }[];
      for (const id of [near, far])
        assert.ok(
          agents.some((a) => a.agentId === id),
          `herd lists ${id}: ${herd!.text}`,
        );
      // Stopped, the agent's connection is up: nothing says unreachable, the sheep is shown as last
      // known. Cut, ssh's keepalives may have given up already: then the host is unreachable.
      const lastKnown = how === "stopped" ? /shown as last known/ : /shown as last known|host unreachable since/;
      assert.match(herd!.text, lastKnown, "herd shows the remote sheep as last known");
      assert.equal(remoteStatus!.isError, false, remoteStatus!.text);
      assert.match(remoteStatus!.text, lastKnown, "status shows the remote sheep as last known");
      assert.equal(remoteWait!.isError, false, remoteWait!.text);
      assert.equal(item(remoteWait!).status, "timeout", JSON.stringify(item(remoteWait!)));
      // Started together in one turn: each of the others ended before the remote wait's own 15 s did.
      for (const o of [localWait!, localStatus!, herd!, remoteStatus!])
        assert.ok(o.endIndex < remoteWait!.endIndex, `${o.text.slice(0, 200)} ended before the remote wait`);
    });

    it("an RPC abort ends a wait on the silent host with [aborted], long before its timeout", async () => {
      await silence();
      const [w] = await f.shepherd.callParallel([{ action: "wait", promptId: remotePrompt, timeout: 120 }], {
        timeoutMs: 110_000,
        whileRunning: async ([id]) => {
          await f.shepherd.until((e) => e.type === "tool_execution_start" && e.toolCallId === id, 60_000);
          // Into the wait's looks at the silent host.
          await sleep(2_000);
          const reply = await f.shepherd.command({ type: "abort" });
          assert.equal(reply.success, true);
        },
      });
      assert.equal(w!.isError, true, w!.text);
      assert.match(w!.text, /^\[aborted\] /);
    });

    it("the shepherd's stdin closed while a wait on the silent host is pending: the shepherd ends before the wait's timeout", async () => {
      await silence();
      const { shepherd } = f;
      const waiting = shepherd.next((e) => e.type === "tool_execution_start", 60_000);
      const pending = shepherd.call({ action: "wait", promptId: remotePrompt, timeout: 120 }, 200_000).catch(() => undefined);
      await waiting;
      await sleep(2_000);
      shepherd.proc.stdin!.end();
      // The wait's own timeout is 120 s: the shepherd must have ended well before it would.
      const timer = new Promise<"still running">((r) => setTimeout(() => r("still running"), 110_000).unref());
      const ended = await Promise.race([
        (async () => {
          await shepherd.proc;
          return "ended" as const;
        })(),
        timer,
      ]);
      assert.equal(ended, "ended", "the shepherd ended once its stdin closed");
      void pending;
    });
  });
}

silentHost("stopped");
silentHost("cut");
