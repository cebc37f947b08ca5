/**
 * The work the core does for a herd, counted (not timed): a wait on one prompt of every sheep
 * while each sheep answers in turn, with the courier attached as in a pi shepherd, then one view
 * of the herd as the widget and the panel draw it. Shared by the scaling test and
 * bench/herd-scaling.ts, so that what grows faster than the herd shows in both.
 */
import { Shepherd } from "../../src/core/shepherd.ts";
import type { PromptId } from "../../src/domain/ids.ts";
import type { AgentDefinition } from "../../src/ports/types.ts";
import type { SheepFiles } from "../../src/ports/sheep-files.ts";
import type { StateStore, StoredState } from "../../src/ports/store.ts";
import { FakeClock, settle } from "./fake-clock.ts";
import { MemoryWorld } from "./memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };

export interface HerdWork {
  n: number;
  /** Reads of the sheep's files while the wait ran and the answers landed. */
  snapshot: number;
  result: number;
  messages: number;
  /** Saves handed to the store, and the records they carried. */
  saves: number;
  savedRecords: number;
  progress: number;
  liveness: number;
  /** Prompt records one view of the herd (herdViews) walked past, and how many there were. */
  viewChecks: number;
  prompts: number;
}

/** `settledEach` prompts answered by every sheep before, as a herd that has worked keeps them. */
export async function herdWork(n: number, settledEach = 3): Promise<HerdWork> {
  const clock = new FakeClock();
  const world = new MemoryWorld();
  const count = { snapshot: 0, result: 0, messages: 0, saves: 0, savedRecords: 0, progress: 0 };
  const files: SheepFiles = {
    ...world.files,
    snapshot: (a) => {
      count.snapshot++;
      return world.files.snapshot(a);
    },
    result: (a, p) => {
      count.result++;
      return world.files.result(a, p);
    },
    messages: (a) => {
      count.messages++;
      return world.files.messages(a);
    },
  };
  const store: StateStore = {
    load: async () => ({ state: { agents: [], prompts: [] }, warnings: [] }),
    save: async (_owner: string, mine: StoredState) => {
      count.saves++;
      count.savedRecords += mine.agents.length + mine.prompts.length;
    },
  };
  const s = new Shepherd({ runtime: world.runtime, files, owner: "s", clock, store, livenessIntervalMs: 1000 });
  s.deliverTo({ deliver: async () => true, notice: () => undefined });
  const sheep: { agentId: string; promptId: PromptId }[] = [];
  for (let i = 0; i < n; i++) {
    const a = await s.start({ definition: def, cwd: "/", label: `s${i + 1}` });
    for (let k = 0; k < settledEach; k++) {
      const p = (await s.prompt(a.agentId, `earlier ${k}`)).promptId;
      world.answer(a.agentId, p, "done");
      await s.wait([p], { timeoutSec: 5 });
    }
    sheep.push({ agentId: a.agentId, promptId: (await s.prompt(a.agentId, "task")).promptId });
  }
  await settle();
  for (const k of Object.keys(count) as (keyof typeof count)[]) count[k] = 0;
  const livenessBefore = world.calls.filter((c) => c.startsWith("liveness")).length;
  const waiting = s.wait(
    sheep.map((x) => x.promptId),
    { timeoutSec: 600, onProgress: () => count.progress++ },
  );
  await settle();
  for (const x of sheep) {
    world.answer(x.agentId, x.promptId, "done");
    await settle();
  }
  const items = await waiting;
  await clock.advance(2000, 100);
  if (!items.every((i) => i.status === "completed"))
    throw new Error(`a sheep did not complete: ${JSON.stringify(items.find((i) => i.status !== "completed"))}`);
  const liveness = world.calls.filter((c) => c.startsWith("liveness")).length - livenessBefore;
  // Every prompt record the view walks past, counted where the records are kept.
  const prompts = s.registry.prompts;
  const values = prompts.values.bind(prompts);
  let viewChecks = 0;
  prompts.values = function* () {
    for (const p of values()) {
      viewChecks++;
      yield p;
    }
  } as typeof prompts.values;
  const views = s.views();
  prompts.values = values;
  if (views.length !== n) throw new Error(`the herd view shows ${views.length} sheep of ${n}`);
  await s.dispose();
  return { n, ...count, liveness, viewChecks, prompts: prompts.size };
}
