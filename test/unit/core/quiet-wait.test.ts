/**
 * Waiting costs almost nothing: while nothing a person sees changes, a wait on a herd sends no
 * progress, reads no sheep's files each second and asks the multiplexer once for all; the herd
 * widget reads only the files of sheep whose bells rang. Counts, not wall-clock time.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd, type WaitProgress } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import type { SheepFiles } from "../../../src/ports/sheep-files.ts";
import { WidgetRefresh } from "../../../src/edge/widget-refresh.ts";
import { herdWidgetLines } from "../../../src/texts/widget.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import type { PromptId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };
const HERD = 16;

/** A herd of working sheep on a host that counts each file read, per sheep. */
async function busyHerd(clock: FakeClock | undefined, running?: (agentId: string) => boolean, notify = false) {
  const world = new MemoryWorld();
  const reads = new Map<string, number>();
  const count = (agentId: string) => {
    reads.set(agentId, (reads.get(agentId) ?? 0) + 1);
  };
  const host: SheepFiles = {
    ...world.files,
    snapshot: (agentId) => {
      count(agentId);
      return world.files.snapshot(agentId);
    },
    result: (agentId, promptId) => {
      count(agentId);
      return world.files.result(agentId, promptId);
    },
    messages: (agentId) => {
      count(agentId);
      return world.files.messages(agentId);
    },
    ...(running ? { running } : {}),
  };
  const shepherd = new Shepherd({ runtime: world.runtime, files: host, owner: "s", ...(clock ? { clock } : {}), livenessIntervalMs: 1000 });
  const sheep: { agentId: string; promptId: PromptId }[] = [];
  for (let i = 0; i < HERD; i++) {
    const a = await shepherd.start({ definition: def, cwd: "/", label: `s${i + 1}` });
    sheep.push({ agentId: a.agentId, promptId: (await shepherd.prompt(a.agentId, "a long task", { notify })).promptId });
  }
  const total = () => [...reads.values()].reduce((a, b) => a + b, 0);
  const livenessCalls = () => world.calls.filter((c) => c.startsWith("liveness")).length;
  return { world, shepherd, sheep, reads, total, livenessCalls };
}

describe("a quiet wait", () => {
  it("sends progress only when something changes, and reads each sheep's files only now and then", async () => {
    const clock = new FakeClock();
    const h = await busyHerd(clock);
    const progress: WaitProgress[] = [];
    const waiting = h.shepherd.wait(
      h.sheep.map((s) => s.promptId),
      { timeoutSec: 600, onProgress: (p) => progress.push(p) },
    );
    await settle();
    assert.equal(progress.length, 1, "the first state goes out at once");
    const reads = h.total();
    const asked = h.livenessCalls();
    await clock.advance(20_000, 1000);
    assert.equal(progress.length, 1, "20 s in which only the seconds moved: no update (views count them from `since`)");
    // Each sheep's files are read once in five quiet seconds (a missed watch event, the pid witness), not every second.
    const perSheep = (h.total() - reads) / HERD;
    assert.ok(perSheep <= 8, `each sheep's files were read ${perSheep} times in 20 quiet seconds`);
    const calls = h.livenessCalls() - asked;
    assert.ok(calls <= 21, `one batched multiplexer call a second for all ${HERD} waiters, got ${calls} in 20 s`);

    // A result rings its sheep's bell: that sheep is read at once, and the change goes out.
    const first = h.sheep[0]!;
    const before = h.reads.get(first.agentId)!;
    h.world.answer(first.agentId, first.promptId, "done");
    await settle();
    assert.ok(h.reads.get(first.agentId)! > before, "the sheep whose bell rang was read");
    await clock.advance(1000, 1000);
    assert.equal(progress.length, 2);
    assert.equal(progress[1]!.done, 1);

    for (const s of h.sheep.slice(1)) h.world.answer(s.agentId, s.promptId, "done");
    const results = await waiting;
    assert.ok(results.every((r) => r.status === "completed"));
  });

  it("fails a sheep whose pane went within about a second, with no file to tell", async () => {
    const clock = new FakeClock();
    const h = await busyHerd(clock);
    const waiting = h.shepherd.wait(
      h.sheep.map((s) => s.promptId),
      { timeoutSec: 600 },
    );
    await clock.advance(3000, 1000);
    h.world.killPane(h.sheep[3]!.agentId);
    await clock.advance(2000, 500);
    for (const [i, s] of h.sheep.entries()) if (i !== 3) h.world.answer(s.agentId, s.promptId, "done");
    const results = await waiting;
    assert.match(results[3]!.error ?? "", /^\[pane_gone\]/);
  });
});

describe("a quiet wait on sheep whose pids run", () => {
  it("asks the multiplexer only every fifth second while every pid runs, and at once when one stops", async () => {
    const clock = new FakeClock();
    const ended = new Set<string>();
    const h = await busyHerd(clock, (agentId) => !ended.has(agentId));
    const waiting = h.shepherd.wait(
      h.sheep.map((s) => s.promptId),
      { timeoutSec: 600 },
    );
    await settle();
    const asked = h.livenessCalls();
    await clock.advance(20_000, 1000);
    const calls = h.livenessCalls() - asked;
    assert.ok(calls <= 5, `every pid runs: the multiplexer is asked every fifth second, got ${calls} calls in 20 s`);

    // The pane is closed: its pi ends, no file says so; the pid does, and the multiplexer is asked.
    const gone = h.sheep[7]!;
    h.world.killPane(gone.agentId);
    ended.add(gone.agentId);
    await clock.advance(1000, 500);
    assert.equal(h.shepherd.registry.prompts.get(gone.promptId)?.settled?.status, "failed", "failed within a second");
    for (const [i, s] of h.sheep.entries()) if (i !== 7) h.world.answer(s.agentId, s.promptId, "done");
    const results = await waiting;
    assert.match(results[7]!.error ?? "", /^\[pane_gone\]/);
    assert.ok(results.every((r, i) => i === 7 || r.status === "completed"));
  });
});

describe("the courier, owed the results of a working herd", () => {
  it("reads no file in a quiet second, and pushes a result as soon as its sheep's bell rings", async () => {
    const clock = new FakeClock();
    const h = await busyHerd(clock, undefined, true);
    const pushed: string[] = [];
    h.shepherd.deliverTo({ deliver: (push) => void pushed.push(push.kind === "result" ? push.item.promptId : push.kind) });
    await clock.advance(1000, 1000);
    const reads = h.total();
    await clock.advance(20_000, 1000);
    const perSheep = (h.total() - reads) / HERD;
    assert.ok(perSheep <= 12, `each sheep's files were read ${perSheep} times in 20 quiet seconds`);

    const one = h.sheep[2]!;
    h.world.answer(one.agentId, one.promptId, "done");
    await settle();
    assert.deepEqual(pushed, [one.promptId]);
    await h.shepherd.dispose();
  });
});

describe("the herd widget while the herd works", () => {
  it("reads no sheep's files in a quiet second, and only the files of a sheep whose bell rang", async () => {
    const h = await busyHerd(undefined);
    const reads = new WidgetRefresh();
    // What the widget does each second: a tick, a refresh, the lines drawn from the records.
    const second = async () => {
      reads.tick();
      assert.ok(await reads.refresh(h.shepherd), "the herd is not empty");
      return herdWidgetLines(reads.views(h.shepherd), Date.now())!;
    };
    reads.all();
    await reads.refresh(h.shepherd);
    const before = h.total();
    for (let i = 0; i < 3; i++) await second();
    assert.equal(h.total() - before, 0, "quiet seconds: no file read");

    const one = h.sheep[5]!;
    h.world.answer(one.agentId, one.promptId, "done");
    await settle();
    const others = () => h.total() - (h.reads.get(one.agentId) ?? 0);
    const othersBefore = others();
    const lines = await second();
    assert.equal(others(), othersBefore, "only the sheep that rang was read");
    assert.match(String(lines.find((l) => l.includes("s6 "))), /idle/, "and the widget shows what changed");
    const all = h.total();
    await second();
    // A working sheep's result file and report, the idle one's report.
    assert.equal(h.total() - all, 2 * (HERD - 1) + 1, "every fifth second every sheep's files are read all the same");
    reads.stop();
  });
});
