/**
 * One source of truth for a sheep's state and its clock: wait's progress, delegate's progress
 * and the herd widget all show a sheep from the same view (Shepherd.view), so at one moment
 * they agree on both.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Delegation } from "../../../src/core/delegation/delegate.ts";
import type { DelegateProgress } from "../../../src/core/delegation/tracking.ts";
import { Shepherd, type WaitProgress } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { renderResultText, type Paint } from "../../../src/edge/render-text.ts";
import { herdWidgetLines } from "../../../src/texts/widget.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };
const plain: Paint = { fg: (_c, s) => s, bold: (s) => s };

function setup() {
  const world = new MemoryWorld();
  const clock = new FakeClock();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock, livenessIntervalMs: 1000 });
  return { world, clock, shepherd };
}

/** The partial result a person sees, drawn at `now` from the herd as it is. */
function drawn(progress: unknown, shepherd: Shepherd, now: number): string {
  return renderResultText({ details: { progress } }, { expanded: false, isPartial: true, isError: false, now, live: (id) => shepherd.view(id) }, plain);
}

describe("one clock for every view of a sheep", () => {
  it("a wait started 6 s after the prompt shows the sheep working 6s, as the widget does", async () => {
    const { world, clock, shepherd } = setup();
    const a = await shepherd.start({ definition: def, cwd: "/", label: "a" });
    const p = await shepherd.prompt(a.agentId, "slow");
    await clock.advance(6000, 1000);
    const progress: WaitProgress[] = [];
    const waiting = shepherd.wait([p.promptId], { timeoutSec: 60, onProgress: (x) => progress.push(x) });
    await settle();
    const first = progress[0]!.items[0]!;
    assert.deepEqual([first.state, first.since, first.elapsedMs], ["working", p.submittedAt, 6000], "the prompt's clock, not the wait's");
    const now = clock.now();
    assert.equal(drawn(progress.at(-1), shepherd, now).split("\n")[1], "⏳ a · echo · working 6s");
    assert.equal(herdWidgetLines(shepherd.views(), now)![1], "  a · echo · working 6s");
    await clock.advance(3000, 1000);
    const later = clock.now();
    assert.equal(drawn(progress.at(-1), shepherd, later).split("\n")[1], "⏳ a · echo · working 9s", "drawn later, it ticks with the widget");
    assert.equal(herdWidgetLines(shepherd.views(), later)![1], "  a · echo · working 9s");
    world.answer(a.agentId, p.promptId, "done");
    const [r] = await waiting;
    assert.equal(r!.status, "completed");
    assert.deepEqual(progress.at(-1)!.items[0]!.state, "completed");
    assert.equal(herdWidgetLines(shepherd.views(), later)![1], "  a · echo · idle");
  });

  it("a delegated sheep is shown by its label from the moment it is recorded, in the state the widget shows", async () => {
    const { world, clock, shepherd } = setup();
    const other = await shepherd.start({ definition: def, cwd: "/" }); // takes the label "echo"
    world.onLaunch = "never";
    const progress: DelegateProgress[] = [];
    const run = new Delegation(shepherd, "parallel", [{ definition: def, task: "t", cwd: "/" }], {
      keepOpen: true,
      maxParallel: 1,
      waitTimeoutSec: 60,
      clock,
      now: () => clock.now(),
      onProgress: (x) => progress.push(x),
    }).run();
    await settle();
    await clock.advance(2000, 1000);
    const starting = progress.at(-1)!.items[0]!;
    const view = shepherd.views().find((v) => v.agentId !== other.agentId)!;
    assert.deepEqual([starting.label, starting.agentId, starting.state], ["echo-2", view.agentId, "starting"], "known before it is ready");
    assert.equal(starting.since, view.since);
    const now = clock.now();
    assert.equal(drawn(progress.at(-1), shepherd, now).split("\n")[1], "… echo-2 · echo · starting 2s");
    assert.equal(herdWidgetLines(shepherd.views(), now)![2], "  echo-2 · echo · starting 2s");
    // Ready: the sheep takes its task, and both views say working from the prompt's clock. The task
    // went into its inbox with the start (issue 26), so that clock began when the sheep was recorded.
    world.mem(view.agentId).snapshot.ready = { pid: 1, readyAt: new Date(clock.now()).toISOString() };
    world.ring(view.agentId);
    await clock.advance(1000, 500);
    const working = progress.at(-1)!.items[0]!;
    assert.equal(working.state, "working");
    const prompt = [...shepherd.registry.prompts.values()].find((x) => x.agentId === view.agentId)!;
    assert.equal(working.since, prompt.submittedAt);
    await clock.advance(4000, 1000);
    assert.equal(drawn(progress.at(-1), shepherd, clock.now()).split("\n")[1], "⏳ echo-2 · echo · working 7s");
    assert.equal(herdWidgetLines(shepherd.views(), clock.now())![2], "  echo-2 · echo · working 7s");
    world.answer(view.agentId, prompt.promptId, "ok");
    const [item] = await run;
    assert.deepEqual([item!.label, item!.status], ["echo-2", "completed"]);
  });
});
