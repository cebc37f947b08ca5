/**
 * A shepherd killed during a remote start leaves a pane on the host with pi running in it and no
 * record (issue 31, item 7). This machine marks each sheep it starts on a host before asking the
 * host to prepare it; a later shepherd's doctor reports such a pane per host and prune closes it
 * (and cleans its files there). A pane this machine did not start (no mark here), one whose
 * starting shepherd still runs, and a recorded sheep's are left alone.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { hostLeftoverChecks } from "../../../src/doctor/run.ts";
import { RoutedRuntime } from "../../../src/hosts/runtime.ts";
import { RoutedSheepFiles } from "../../../src/hosts/routed-sheep-files.ts";
import { fileStartMarks } from "../../../src/hosts/start-marks.ts";
import { HostTable } from "../../../src/hosts/table.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { pruneText } from "../../../src/texts/format.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

describe("panes on a host that a stopped shepherd's start left", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-hostpanes-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("doctor reports them per host, prune closes them and says so; others' panes stay", async () => {
    const marks = join(dir, "host-starts");
    const local = new MemoryWorld();
    const gpu = new MemoryWorld();
    const shepherdOn = (owner: string, alive: (o: string) => boolean) => {
      let s: Shepherd | undefined;
      const table = new HostTable({
        local: { runtime: local.runtime, files: local.files },
        hosts: ["gpu"],
        connect: () => ({ runtime: gpu.runtime, files: gpu.files, down: () => undefined, dir: async (p) => p ?? "/home/me", close: async () => undefined }),
        hostOf: (agentId) => s?.registry.agents.get(agentId)?.host,
        starts: fileStartMarks(marks, owner),
      });
      s = new Shepherd({
        runtime: new RoutedRuntime(table),
        files: new RoutedSheepFiles(table),
        owner,
        ownerAlive: alive,
        clock: new FakeClock(),
        audit: { record: () => undefined },
      });
      return s;
    };
    // The shepherd that will be killed (its records never reach the next one), and one still running.
    const dead = shepherdOn("111:dead", () => true);
    const cut = await dead.start({ definition: def, cwd: "/srv", host: "gpu", label: "cut" });
    const busy = shepherdOn("222:alive", () => true);
    const onItsWay = await busy.start({ definition: def, cwd: "/srv", host: "gpu", label: "busy" });
    // Another machine's shepherd made a sheep pane there: no mark here.
    await gpu.runtime.createPane({ agentId: "a_elsewhere1", label: "theirs", command: { argv: ["pi"] }, cwd: "/", placement: "tab" } as never);

    const next = shepherdOn("333:me", (o) => o !== "111:dead");
    const checks = await hostLeftoverChecks(() => next.leftovers());
    assert.deepEqual(
      checks.map((c) => [c.name, c.verdict]),
      [["host gpu: orphan pane", "warn"]],
    );
    assert.match(checks[0]!.detail, new RegExp(`mark of ${cut.agentId}, which this machine started`));

    const out = await next.prune();
    assert.deepEqual(
      out.hostPanes?.map((p) => [p.agentId, p.host]),
      [[cut.agentId, "gpu"]],
    );
    assert.match(pruneText(out), new RegExp(`Closed the pane of ${cut.agentId} on host gpu, which no record knew`));
    const alive = (await gpu.runtime.markedPanes()).map((p) => p.agentId).sort();
    assert.deepEqual(alive, [onItsWay.agentId, "a_elsewhere1"].sort(), "only the cut-short start's pane is closed");
    assert.equal(gpu.sheep.get(cut.agentId)?.cleaned, true, "its files there are cleaned up as a close would");
    assert.deepEqual(await hostLeftoverChecks(() => next.leftovers()), [], "its mark went with it");
  });
});
