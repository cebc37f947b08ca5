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
import { RoutedRuntime } from "../../src/hosts/runtime.ts";
import { RoutedSheepFiles } from "../../src/hosts/routed-sheep-files.ts";
import { HostTable } from "../../src/hosts/table.ts";
import type { Runtime } from "../../src/ports/runtime.ts";
import { WidgetRefresh } from "../../src/edge/widget-refresh.ts";
import { herdWidgetLines } from "../../src/texts/widget.ts";
import { FakeClock, settle } from "./fake-clock.ts";
import { type LinkCount, loopbackHost, newLinkCount } from "./loopback-link.ts";
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
  /** Prompt records one frame of the herd widget (its views and its lines) walked past, and its lines. */
  widgetChecks: number;
  widgetLines: number;
  prompts: number;
  /** With hosts: what every host's link carried while the wait ran and the answers landed. */
  link?: LinkCount;
  /** With `herd`: the panes each multiplexer question of one `herd` named, every host's in host order. */
  herdLiveness?: number[];
  /** With `herd`: the requests that one `herd` sent over every host's link, by method. */
  herdRequests?: Map<string, number>;
}

export interface HerdWorkOptions {
  /** Prompts answered by every sheep before, as a herd that has worked keeps them (default 3). */
  settledEach?: number;
  /**
   * Remote hosts the herd is spread over (sheep i on host i mod hosts), each an in-memory world
   * behind a loopback link to the real agent server (loopback-link.ts); 0: every sheep here.
   */
  hosts?: number;
  /** Also one `herd` at the end, its multiplexer questions noted. */
  herd?: boolean;
}

export async function herdWork(n: number, o: HerdWorkOptions = {}): Promise<HerdWork> {
  const settledEach = o.settledEach ?? 3;
  const hosts = o.hosts ?? 0;
  const clock = new FakeClock();
  const world = new MemoryWorld();
  const far = Array.from({ length: hosts }, () => new MemoryWorld());
  const names = far.map((_, h) => `h${h + 1}`);
  const link = newLinkCount();
  let s: Shepherd | undefined;
  let runtime: Runtime = world.runtime;
  let base: SheepFiles = world.files;
  if (hosts > 0) {
    const table = new HostTable({
      local: { runtime: world.runtime, files: world.files },
      hosts: names,
      connect: (name) => loopbackHost(name, far[names.indexOf(name)]!, link),
      hostOf: (agentId) => s?.registry.agents.get(agentId)?.host,
    });
    runtime = new RoutedRuntime(table);
    base = new RoutedSheepFiles(table);
  }
  /** The world a sheep runs in, by its host. */
  const worldOf = (agentId: string) => {
    const host = s?.registry.agents.get(agentId)?.host;
    return host === undefined ? world : far[names.indexOf(host)]!;
  };
  const count = { snapshot: 0, result: 0, messages: 0, saves: 0, savedRecords: 0, progress: 0 };
  const files: SheepFiles = Object.assign(Object.create(Object.getPrototypeOf(base)) as SheepFiles, base, {
    snapshot: (a: string) => {
      count.snapshot++;
      return base.snapshot(a);
    },
    result: (a: string, p: string) => {
      count.result++;
      return base.result(a, p);
    },
    messages: (a: string) => {
      count.messages++;
      return base.messages(a);
    },
  });
  const store: StateStore = {
    load: async () => ({ state: { agents: [], prompts: [] }, warnings: [] }),
    save: async (_owner: string, mine: StoredState) => {
      count.saves++;
      count.savedRecords += mine.agents.length + mine.prompts.length;
    },
  };
  s = new Shepherd({ runtime, files, owner: "s", clock, store, livenessIntervalMs: 1000 });
  s.deliverTo({ deliver: async () => true, notice: () => undefined });
  const sheep: { agentId: string; promptId: PromptId }[] = [];
  for (let i = 0; i < n; i++) {
    const host = hosts > 0 ? names[i % hosts] : undefined;
    const a = await s.start({ definition: def, cwd: "/", label: `s${i + 1}`, ...(host !== undefined ? { host } : {}) });
    for (let k = 0; k < settledEach; k++) {
      const p = (await s.prompt(a.agentId, `earlier ${k}`)).promptId;
      worldOf(a.agentId).answer(a.agentId, p, "done");
      await s.wait([p], { timeoutSec: 5 });
    }
    sheep.push({ agentId: a.agentId, promptId: (await s.prompt(a.agentId, "task")).promptId });
  }
  await settle();
  for (const k of Object.keys(count) as (keyof typeof count)[]) count[k] = 0;
  const livenessCalls = () => [world, ...far].reduce((k, w) => k + w.calls.filter((c) => c.startsWith("liveness")).length, 0);
  const livenessBefore = livenessCalls();
  Object.assign(link, newLinkCount());
  const waiting = s.wait(
    sheep.map((x) => x.promptId),
    { timeoutSec: 600, onProgress: () => count.progress++ },
  );
  await settle();
  for (const x of sheep) {
    worldOf(x.agentId).answer(x.agentId, x.promptId, "done");
    await settle();
  }
  const items = await waiting;
  await clock.advance(2000, 100);
  if (!items.every((i) => i.status === "completed"))
    throw new Error(`a sheep did not complete: ${JSON.stringify(items.find((i) => i.status !== "completed"))}`);
  const liveness = livenessCalls() - livenessBefore;
  const carried: LinkCount = { ...link, requests: new Map(link.requests) };
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
  const afterView = viewChecks;
  const lines = herdWidgetLines(new WidgetRefresh().views(s), clock.now()) ?? [];
  const widgetChecks = viewChecks - afterView;
  prompts.values = values;
  if (views.length !== n) throw new Error(`the herd view shows ${views.length} sheep of ${n}`);
  let herdLiveness: number[] | undefined;
  let herdRequests: Map<string, number> | undefined;
  if (o.herd) {
    // Past the liveness monitor's own period: herd asks afresh.
    await clock.advance(5000, 100);
    const before = [world, ...far].map((w) => w.calls.length);
    Object.assign(link, newLinkCount());
    const all = await s.herd();
    herdRequests = new Map(link.requests);
    if (all.length !== n || !all.every((a) => a.paneAlive)) throw new Error(`herd showed ${all.length} sheep of ${n}, or a pane gone`);
    herdLiveness = [world, ...far].flatMap((w, i) =>
      w.calls
        .slice(before[i])
        .filter((c) => c.startsWith("liveness "))
        .map((c) => Number(c.split(" ")[1])),
    );
  }
  await s.dispose();
  return {
    n,
    ...count,
    liveness,
    viewChecks: afterView,
    widgetChecks,
    widgetLines: lines.length,
    prompts: prompts.size,
    ...(hosts > 0 ? { link: carried } : {}),
    ...(herdLiveness ? { herdLiveness } : {}),
    ...(herdRequests ? { herdRequests } : {}),
  };
}
