import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { RoutedRuntime } from "../../../src/hosts/runtime.ts";
import { RoutedSheepFiles } from "../../../src/hosts/routed-sheep-files.ts";
import { type HostDown, HostTable, type RemotePorts } from "../../../src/hosts/table.ts";
import { RoutedWorkspace } from "../../../src/hosts/workspace.ts";
import { nextBaseline } from "../../../src/core/prompts/evidence.ts";
import type { AgentDefinition, PromptRecord } from "../../../src/ports/types.ts";
import type { Workspace } from "../../../src/ports/workspace.ts";
import type { PaneRef, Runtime } from "../../../src/ports/runtime.ts";
import { isShepherdError } from "../../../src/domain/errors.ts";
import { closeText } from "../../../src/texts/format.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

/** This machine and a host "gpu", each an in-memory world: the core sees one runtime and one sheep-files port. */
function setup(o: { terminal?: Pick<Runtime, "watch" | "sendKeys"> } = {}) {
  const local = new MemoryWorld();
  const gpu = new MemoryWorld();
  let down: HostDown | undefined;
  let connects = 0;
  let closed = 0;
  let shepherd: Shepherd | undefined;
  const remote = (): RemotePorts => ({
    runtime: {
      ...gpu.runtime,
      liveness: async (refs) => {
        if (down) throw new Error("ssh: connection lost");
        return gpu.runtime.liveness(refs);
      },
      ...o.terminal,
    },
    files: gpu.files,
    down: () => down,
    dir: async (p) => p ?? "/home/me",
    close: async () => {
      closed++;
    },
  });
  const table = new HostTable({
    local: { runtime: local.runtime, files: local.files },
    hosts: ["gpu"],
    connect: () => {
      connects++;
      return remote();
    },
    hostOf: (agentId) => shepherd?.registry.agents.get(agentId)?.host,
  });
  const clock = new FakeClock();
  shepherd = new Shepherd({
    runtime: new RoutedRuntime(table),
    files: new RoutedSheepFiles(table),
    owner: "s1",
    clock,
    livenessIntervalMs: 1000,
    startTimeoutMs: 10_000,
  });
  return {
    local,
    gpu,
    table,
    shepherd,
    setDown: (d: HostDown | undefined) => {
      down = d;
    },
    counts: () => ({ connects, closed }),
  };
}

/** This machine and host gpu, in-memory, each with the workspace `ws` names for it. */
function workspacesTable(ws: (name: string) => Workspace, hostOf: (agentId: string) => string | undefined): HostTable {
  const local = new MemoryWorld();
  const gpu = new MemoryWorld();
  return new HostTable({
    local: { runtime: local.runtime, files: local.files, workspace: ws("local") },
    hosts: ["gpu"],
    connect: () => ({ runtime: gpu.runtime, files: gpu.files, workspace: ws("gpu"), down: () => undefined, dir: async (p) => p ?? "/", close: async () => {} }),
    hostOf,
  });
}

describe("host router", () => {
  it("a remote sheep's terminal goes to its host's runtime with the pane id there; a runtime there that streams none is runtime_unavailable", async () => {
    const asked: { watched: PaneRef[]; typed: [PaneRef, string][] } = { watched: [], typed: [] };
    const screen = { text: "far", cols: 80, rows: 24, cursorX: 0, cursorY: 0 };
    const s = setup({
      terminal: {
        watch: async (pane) => {
          asked.watched.push(pane);
          return { screen, close: () => undefined };
        },
        sendKeys: async (pane, text) => {
          asked.typed.push([pane, text]);
        },
      },
    });
    const there = await s.shepherd.start({ definition: def, cwd: "/srv/work", host: "gpu", label: "far" });
    const sink = { output: () => undefined, end: () => undefined };
    const watch = await s.shepherd.terminal.watch(there.agentId, sink);
    assert.deepEqual(watch.screen, screen);
    await s.shepherd.terminal.type(there.agentId, "ls\r");
    assert.deepEqual(asked.watched, [{ agentId: there.agentId, paneId: "%1" }]);
    assert.deepEqual(asked.typed, [[{ agentId: there.agentId, paneId: "%1" }, "ls\r"]]);
    watch.close();

    const bare = setup();
    const far = await bare.shepherd.start({ definition: def, cwd: "/srv/work", host: "gpu", label: "far" });
    const unavailable = (e: unknown) => isShepherdError(e, "runtime_unavailable") && /on host gpu cannot stream/.test(e.message);
    await assert.rejects(bare.shepherd.terminal.watch(far.agentId, sink), unavailable);
    await assert.rejects(bare.shepherd.terminal.type(far.agentId, "x"), unavailable);
  });

  it("starts a sheep where its start says, records the host, and keeps pane ids unique across machines", async () => {
    const s = setup();
    const here = await s.shepherd.start({ definition: def, cwd: "/work" });
    const there = await s.shepherd.start({ definition: def, cwd: "/srv/work", host: "gpu", label: "far" });
    assert.equal(here.host, undefined);
    assert.equal(there.host, "gpu");
    // Both multiplexers numbered their first pane %1: the remote one is told apart by its host.
    assert.equal(here.paneId, "%1");
    assert.equal(there.paneId, "gpu/%1");
    assert.equal(s.local.prepared.length, 1);
    assert.equal(s.gpu.prepared.length, 1);
    assert.equal(s.gpu.prepared[0]!.host, "gpu");
    assert.equal(s.gpu.prepared[0]!.cwd, "/srv/work");
    const [st] = (await s.shepherd.herd()).filter((a) => a.agentId === there.agentId);
    assert.equal(st!.host, "gpu");
  });

  it("prompts, waits and closes through the sheep's own host", async () => {
    const s = setup();
    const there = await s.shepherd.start({ definition: def, cwd: "/srv", host: "gpu" });
    const p = await s.shepherd.prompt(there.agentId, "hello");
    assert.equal(s.gpu.sheep.get(there.agentId)!.inbox.get(p.promptId), "hello");
    assert.equal(s.local.sheep.has(there.agentId), false);
    s.gpu.answer(there.agentId, p.promptId, "from afar");
    const [r] = await s.shepherd.wait([p.promptId], { timeoutSec: 5 });
    assert.equal(r!.status, "completed");
    assert.equal(r!.text, "from afar");
    assert.match(await s.shepherd.read(there.agentId, 5), /pane of/);
    const closed = await s.shepherd.close(there.agentId);
    assert.equal(s.gpu.panes.get("%1")!.alive, false);
    assert.equal(closed.host, "gpu", "the kept session file is named with its host");
    assert.match(closeText({ ...closed, sessionPath: "/srv/s.jsonl" }, "far"), /kept at \/srv\/s\.jsonl on host gpu\./);
    assert.equal(s.counts().connects, 1, "one connection for every call to the host");
  });

  it("a host that does not answer hides nothing of this machine, and its sheep are not called gone", async () => {
    const s = setup();
    const here = await s.shepherd.start({ definition: def, cwd: "/work" });
    const there = await s.shepherd.start({ definition: def, cwd: "/srv", host: "gpu" });
    s.setDown({ since: "2026-12-01T15:00:00.000Z", reason: "ssh: connect to host gpu port 22: Connection refused" });
    const live = await new RoutedRuntime(s.table).liveness([
      { agentId: here.agentId, paneId: here.paneId },
      { agentId: there.agentId, paneId: there.paneId },
    ]);
    assert.deepEqual(live.get(here.agentId), { state: "alive" });
    assert.equal(live.has(there.agentId), false, "no answer is not gone");
  });

  it("an unknown host is refused with the names there are", async () => {
    const s = setup();
    await assert.rejects(s.shepherd.start({ definition: def, cwd: "/srv", host: "nope" }), (e: Error) => {
      assert.match(e.message, /^\[host_unknown\] no host is called "nope"; the hosts are: local, gpu\./);
      return true;
    });
    assert.equal(s.shepherd.views().length, 0, "nothing recorded");
  });

  it("stamps the host on a remote worktree and baseline and routes them back", async () => {
    const seen: string[] = [];
    const ws = (name: string) => ({
      baseline: async (cwd: string) => {
        seen.push(`${name} baseline ${cwd}`);
        return { root: cwd, tree: "t", takenAt: "now" };
      },
      diff: async () => {
        seen.push(`${name} diff`);
        throw new Error("not here");
      },
      isolate: async (o: { cwd: string; agentId: string }) => {
        seen.push(`${name} isolate`);
        return { worktree: { path: `${o.cwd}/wt`, branch: "shepherd/x", repoRoot: o.cwd, base: "b", leftBehind: 0 }, cwd: `${o.cwd}/wt` };
      },
      inspect: async () => {
        seen.push(`${name} inspect`);
        return { exists: true, uncommitted: [], unlanded: false };
      },
      remove: async () => {},
      land: async () => {
        throw new Error("x");
      },
      sync: async () => {
        throw new Error("x");
      },
      conflicts: async () => [],
    });
    const table = workspacesTable(ws, (id) => (id === "a_remote" ? "gpu" : undefined));
    const routed = new RoutedWorkspace(table);
    const made = await routed.isolate({ cwd: "/srv", agentId: "a_new", label: "x", host: "gpu" });
    assert.equal(made.worktree.host, "gpu");
    // A chain step here cannot start from the step before's worktree there, nor the other way.
    await assert.rejects(
      routed.isolate({ cwd: "/work", agentId: "a_next", label: "y", from: made.worktree }),
      /\[invalid_params\] this step runs on this machine, but .* is on host "gpu"/,
    );
    const here = { path: "/work/wt", branch: "shepherd/y", repoRoot: "/work", base: "b", leftBehind: 0 };
    await assert.rejects(routed.isolate({ cwd: "/srv", agentId: "a_next", label: "y", host: "gpu", from: here }), /on host "gpu", but .* is on this machine/);
    await routed.inspect(made.worktree);
    const b = await routed.baseline("/srv", "a_remote");
    assert.equal(b!.host, "gpu");
    assert.equal((await routed.baseline("/work", "a_local"))!.host, undefined);
    await assert.rejects(routed.diff(b!, { patchPath: "/p", inlineLines: 1 }));
    assert.deepEqual(seen, ["gpu isolate", "gpu inspect", "gpu baseline /srv", "local baseline /work", "gpu diff"]);
  });

  it("a follow-up queued behind a remote prompt starts from that prompt's evidence on the same host", async () => {
    const seen: string[] = [];
    // As a host's agent answers: its baseline knows no host.
    const diffOf = (name: string) => async (b: { root: string }) => {
      seen.push(`${name} diff ${b.root}`);
      return {
        baseline: { root: b.root, tree: "t1", takenAt: "then" },
        after: "t2",
        afterAt: "now",
        files: [],
        fileCount: 0,
        insertions: 0,
        deletions: 0,
        patchPath: "/p",
        patch: "",
        truncated: false,
      };
    };
    const ws = (name: string) => ({ diff: diffOf(name) }) as unknown as Workspace;
    const table = workspacesTable(ws, () => "gpu");
    const routed = new RoutedWorkspace(table);
    const first = await routed.diff({ root: "/srv/repo", tree: "t1", takenAt: "then", host: "gpu" }, { patchPath: "/p", inlineLines: 1 });
    assert.equal(first.baseline.host, "gpu", "the evidence's baseline is stamped with its host");
    const settled = {
      promptId: "p_0000000001",
      agentId: "a_remote",
      submittedAt: "then",
      settled: { status: "completed", evidence: first },
    } as unknown as PromptRecord;
    const next = { promptId: "p_0000000002", agentId: "a_remote", submittedAt: "then" } as PromptRecord;
    nextBaseline(settled, next);
    assert.equal(next.baseline?.host, "gpu");
    await routed.diff(next.baseline!, { patchPath: "/p", inlineLines: 1 });
    assert.deepEqual(seen, ["gpu diff /srv/repo", "gpu diff /srv/repo"], "both on the host, never git here on a path of that machine");
  });
});
