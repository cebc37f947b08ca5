/**
 * A host whose agent stopped answering (SIGSTOP, its connection up) must never hold up this
 * machine's sheep (issue 31, item 4): in-memory worlds, the host's every call left unanswered,
 * a fake clock. A local wait on a killed sheep says it died, status and herd answer, the remote
 * wait ends at its timeout, an abort ends a wait during a look, a quit ends; the remote link's
 * calls have a deadline of their own.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { STATUS_LOOK_MS } from "../../../src/core/prompts/views.ts";
import { QUIT_LOOK_MS } from "../../../src/core/lifecycle/quit.ts";
import { RoutedRuntime } from "../../../src/hosts/runtime.ts";
import { RoutedSheepFiles } from "../../../src/hosts/routed-sheep-files.ts";
import { HostTable } from "../../../src/hosts/table.ts";
import { RpcClient } from "../../../src/remote/rpc/client.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

/** Every method of `o` that returns a promise never settles once `silent()` says so. */
function silenced<T extends object>(o: T, silent: () => boolean): T {
  return new Proxy(o, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const r = v.apply(target, args);
        return silent() && r instanceof Promise ? new Promise(() => undefined) : r;
      };
    },
  });
}

async function world() {
  const local = new MemoryWorld();
  const gpu = new MemoryWorld();
  let silent = false;
  let shepherd: Shepherd | undefined;
  const table = new HostTable({
    local: { runtime: local.runtime, files: local.files },
    hosts: ["gpu"],
    connect: () => ({
      runtime: silenced(gpu.runtime, () => silent),
      files: silenced(gpu.files, () => silent),
      down: () => undefined,
      dir: async (p) => p ?? "/home/me",
      close: async () => undefined,
    }),
    hostOf: (agentId) => shepherd?.registry.agents.get(agentId)?.host,
  });
  const clock = new FakeClock();
  shepherd = new Shepherd({ runtime: new RoutedRuntime(table), files: new RoutedSheepFiles(table), owner: "s1", clock, livenessIntervalMs: 1000 });
  const here = await shepherd.start({ definition: def, cwd: "/work", label: "here" });
  const there = await shepherd.start({ definition: def, cwd: "/srv", host: "gpu", label: "there" });
  const pHere = await shepherd.prompt(here.agentId, "local work");
  const pThere = await shepherd.prompt(there.agentId, "remote work");
  // A first round of looks while both answer: the liveness of both sheep is being watched.
  void shepherd.status(there.agentId);
  await settle();
  silent = true;
  return { local, gpu, clock, shepherd, here, there, pHere, pThere };
}

/** Drives the fake clock until `p` settles (at most `ms` of fake time). */
async function until<T>(clock: FakeClock, p: Promise<T>, ms: number): Promise<T> {
  let done = false;
  const watched = p.finally(() => {
    done = true;
  });
  watched.catch(() => undefined);
  for (let t = 0; t < ms && !done; t += 100) await clock.advance(100, 100);
  assert.ok(done, `still waiting after ${ms} ms of the clock`);
  return watched;
}

describe("a host that stopped answering holds up nothing else", () => {
  it("a local wait on a killed local sheep says it died, and the remote wait ends at its timeout", async () => {
    const w = await world();
    w.local.exitPi(w.here.agentId, { code: null, signal: "SIGKILL" });
    const [mine] = await until(w.clock, w.shepherd.wait([w.pHere.promptId], { timeoutSec: 15 }), 5_000);
    assert.equal(mine!.status, "failed", JSON.stringify(mine));
    assert.match(mine!.error!, /^\[pi_exited\] /);
    const [far] = await until(w.clock, w.shepherd.wait([w.pThere.promptId], { timeoutSec: 15 }), 20_000);
    assert.equal(far!.status, "timeout", JSON.stringify(far));
  });

  it("an abort ends a wait while a look at the silent host is under way", async () => {
    const w = await world();
    const stop = new AbortController();
    const waiting = w.shepherd.wait([w.pThere.promptId], { timeoutSec: 600, signal: stop.signal });
    await w.clock.advance(3_000, 100);
    stop.abort();
    await assert.rejects(until(w.clock, waiting, 1_000), /\[aborted\] /);
  });

  it("status and herd answer: this machine's sheep as it is, the host's as last known", async () => {
    const w = await world();
    const mine = await until(w.clock, w.shepherd.status(w.here.agentId), 1_000);
    assert.equal(mine.paneAlive, true);
    const all = await until(w.clock, w.shepherd.herd(), STATUS_LOOK_MS + 1_000);
    const far = all.find((a) => a.agentId === w.there.agentId);
    assert.equal(far?.state, "working");
    assert.match(far?.runtimeStatus ?? "", /did not answer within/);
  });

  it("a quit ends, keeping the host's sheep it could not ask", async () => {
    const w = await world();
    const out = await until(w.clock, w.shepherd.quit(), QUIT_LOOK_MS + 1_000);
    const kept = out.kept.find((k) => k.agentId === w.there.agentId);
    assert.match(kept?.unread ?? "", /did not answer within/);
  });

  it("a remote call unanswered fails at its deadline as lost, and the agent is taken for hung", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const silent: string[] = [];
    const client = new RpcClient({ input, output, host: "gpu", deadlineMs: () => 50, onSilent: (m) => silent.push(m) });
    await assert.rejects(
      client.call("files.snapshot", ["a_x"]),
      /\[host_unreachable\] host "gpu" did not answer files\.snapshot within 0\.05 s: it may have been done there/,
    );
    assert.deepEqual(silent, ["files.snapshot"]);
  });
});

describe("a start that never launches (issue 31, item 7)", () => {
  it("removes what prepare wrote (the spec with forwarded secrets) when its first prompt fails", async () => {
    const local = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: local.runtime, files: local.files, owner: "s1", clock: new FakeClock(), maxPromptBytes: 4 });
    await assert.rejects(shepherd.start({ definition: def, cwd: "/work", prompt: { text: "far too long" } }), /\[invalid_params\]/);
    const agentId = local.prepared[0]!.agentId;
    assert.equal(local.sheep.get(agentId)?.cleaned, true, "the prepared files were removed");
  });
});
