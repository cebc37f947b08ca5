import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Delegation } from "../../../src/core/delegation/delegate.ts";
import type { DelegateProgress } from "../../../src/core/delegation/tracking.ts";
import { delegateOutcome } from "../../../src/actions/delegate-text.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { WARM_SHEEP_MB } from "../../../src/domain/bounds.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { settle } from "../../support/fake-clock.ts";
import { MemoryWorkspace } from "../../support/memory-workspace.ts";
import { RoutedRuntime } from "../../../src/hosts/runtime.ts";
import { RoutedSheepFiles } from "../../../src/hosts/routed-sheep-files.ts";
import { HostTable } from "../../../src/hosts/table.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { parseAgentId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };

/** A world whose sheep answer every prompt with a function of its text. */
function world(answer: (text: string) => { text: string; status?: "completed" | "failed" } | undefined, workspace?: MemoryWorkspace) {
  const w = new MemoryWorld();
  const submit = w.files.submit;
  w.files.submit = async (agentId, d) => {
    await submit(agentId, d);
    if (d.kind !== "prompt") return;
    const { promptId, text } = d;
    const a = answer(text);
    if (a) setImmediate(() => w.answer(agentId, promptId, a.text, a.status ?? "completed", a.status === "failed" ? "boom" : undefined));
  };
  const shepherd = new Shepherd({ runtime: w.runtime, files: w.files, owner: "s", livenessIntervalMs: 50, ...(workspace ? { workspace } : {}) });
  return { w, shepherd };
}

describe("delegation on the primitives", () => {
  it("parallel keeps input order, respects maxParallel, and closes each sheep", async () => {
    let working = 0;
    let most = 0;
    const { w, shepherd } = world(() => undefined);
    const submit = w.files.submit;
    w.files.submit = async (agentId, d) => {
      await submit(agentId, d);
      if (d.kind !== "prompt") return;
      const { promptId, text } = d;
      most = Math.max(most, ++working);
      setTimeout(
        () => {
          working--;
          w.answer(agentId, promptId, `done ${text}`);
        },
        20 + Number(text) * 5,
      );
    };
    const tasks = ["5", "1", "4", "2", "3"].map((task) => ({ definition: def, task, cwd: "/" }));
    const items = await new Delegation(shepherd, "parallel", tasks, { keepOpen: false, maxParallel: 2, waitTimeoutSec: 10 }).run();
    assert.deepEqual(
      items.map((i) => i.text),
      ["done 5", "done 1", "done 4", "done 2", "done 3"],
    );
    assert.equal(most, 2);
    await shepherd.released();
    assert.equal(w.calls.filter((c) => c.startsWith("close")).length, 5);
  });

  it("returns as soon as the answers are in: closing the sheep finishes after, and a close that fails keeps the record", async () => {
    const { w, shepherd } = world((text) => ({ text: `done ${text}` }));
    let letGo!: () => void;
    const held = new Promise<void>((r) => (letGo = r));
    const close = w.runtime.close.bind(w.runtime);
    let closing = 0;
    w.runtime.close = async (paneId, agentId) => {
      closing++;
      await held;
      if (agentId === failing) throw new Error("tmux: no server running");
      return close(paneId, agentId);
    };
    let failing: string | undefined;
    const tasks = ["a", "b"].map((task) => ({ definition: def, task, cwd: "/" }));
    const items = await new Delegation(shepherd, "parallel", tasks, { keepOpen: false, maxParallel: 2, waitTimeoutSec: 10 }).run();
    assert.deepEqual(
      items.map((i) => i.text),
      ["done a", "done b"],
    );
    for (let i = 0; i < 50 && closing < 2; i++) await settle();
    assert.equal(closing, 2, "both closes began");
    for (const i of items) assert.notEqual(shepherd.registry.agents.get(i.agentId!)?.state, "closed", "the call returned before any close finished");
    failing = items[1]!.agentId;
    letGo();
    await shepherd.released();
    assert.equal(shepherd.registry.agents.get(items[0]!.agentId!)?.state, "closed");
    assert.notEqual(shepherd.registry.agents.get(failing!)?.state, "closed", "a close that failed keeps its record");
    assert.ok(shepherd.registry.agents.has(failing!));
  });

  it("a cold task's prompt is in its sheep's inbox before its pane exists", async () => {
    const { w, shepherd } = world((text) => ({ text: `done ${text}` }));
    const submit = w.files.submit;
    w.files.submit = async (agentId, d) => {
      w.calls.push(`submit ${d.kind}`);
      await submit(agentId, d);
    };
    const [item] = await new Delegation(shepherd, "single", [{ definition: def, task: "x", cwd: "/" }], {
      keepOpen: true,
      maxParallel: 1,
      waitTimeoutSec: 10,
    }).run();
    assert.equal(item!.text, "done x");
    const order = w.calls.filter((c) => c.startsWith("submit") || c.startsWith("create"));
    assert.deepEqual(order, ["submit prompt", "create %1 tab"]);
    const p = shepherd.registry.prompts.get([...shepherd.registry.prompts.keys()][0]!)!;
    assert.equal(p.agentId, item!.agentId);
  });

  it("an isolated chain step goes on from the isolated step before it, not from HEAD", async () => {
    const workspace = new MemoryWorkspace();
    const { shepherd } = world((text) => ({ text: `<${text}>` }), workspace);
    const step = (task: string, isolate: boolean) => ({ definition: def, task, cwd: "/repo", ...(isolate ? { isolate: true } : {}) });
    const items = await new Delegation(shepherd, "chain", [step("plan", true), step("build", true), step("look", false), step("fix", true)], {
      keepOpen: false,
      maxParallel: 4,
      waitTimeoutSec: 10,
    }).run();
    assert.deepEqual(
      items.map((i) => i.status),
      ["completed", "completed", "completed", "completed"],
    );
    const [plan, build] = items.map((i) => i.worktree?.path);
    assert.deepEqual(
      workspace.calls.filter((c) => c.startsWith("isolate")),
      // A step that is not isolated has no worktree to hand on: the one after it starts from HEAD.
      ["isolate /repo", `isolate /repo from ${plan}`, "isolate /repo"],
    );
    assert.ok(build && plan !== build);
  });

  it("chain replaces every {previous} and stops at the first failure", async () => {
    const { shepherd } = world((text) => (text.includes("FAIL") ? { text: "", status: "failed" } : { text: `<${text}>` }));
    const progress: DelegateProgress[] = [];
    const items = await new Delegation(
      shepherd,
      "chain",
      [
        { definition: def, task: "a{previous}", cwd: "/" },
        { definition: def, task: "{previous}|{previous}", cwd: "/" },
        { definition: def, task: "FAIL {previous}", cwd: "/" },
        { definition: def, task: "never", cwd: "/" },
      ],
      { keepOpen: false, maxParallel: 4, waitTimeoutSec: 10, onProgress: (p) => progress.push(p) },
    ).run();
    assert.deepEqual(
      items.map((i) => [i.step, i.task, i.status]),
      [
        [1, "a", "completed"],
        [2, "<a>|<a>", "completed"],
        [3, "FAIL <<a>|<a>>", "failed"],
      ],
    );
    assert.equal(progress[progress.length - 1]!.items[3]!.state, "queued");
    assert.match(delegateOutcome("chain", items, 4).summary, /^Chain stopped at step 3 \(echo\): \[provider_error\] boom\. 2\/4 steps succeeded\.$/);
  });

  it("abort closes the sheep it started and cancels what had not started", async () => {
    const { w, shepherd } = world(() => undefined);
    const ac = new AbortController();
    const running = new Delegation(
      shepherd,
      "parallel",
      [1, 2, 3].map((n) => ({ definition: def, task: String(n), cwd: "/" })),
      {
        keepOpen: true,
        maxParallel: 2,
        waitTimeoutSec: 100,
        signal: ac.signal,
      },
    ).run();
    for (let i = 0; i < 50 && [...w.sheep.values()].filter((s) => s.inbox.size > 0).length < 2; i++) await settle();
    ac.abort();
    const items = await running;
    assert.deepEqual(
      items.map((i) => i.status),
      ["cancelled", "cancelled", "cancelled"],
    );
    assert.equal(w.calls.filter((c) => c.startsWith("close")).length, 2, "both started sheep were closed despite keepOpen");
    assert.equal(w.calls.filter((c) => c.startsWith("create")).length, 2, "the third never started");
    assert.throws(() => delegateOutcome("parallel", items, 3), /^ShepherdError: \[aborted\] parallel delegation: no task succeeded/);
  });
});

describe("sheep that come back", () => {
  const pooled = (returns: number, definitions = async () => [def]) => {
    const made = world((text) => ({ text: `done ${text}` }));
    // The memory host reads no resident memory: each sheep counts at the estimate.
    made.shepherd.keepWarm({ sizes: {}, memoryMb: returns * WARM_SHEEP_MB, cwd: "/", placement: "tab", direction: "right", definitions });
    return made;
  };
  const once = (shepherd: Shepherd, task: string, cwd = "/") =>
    new Delegation(shepherd, "single", [{ definition: def, task, cwd }], { keepOpen: false, maxParallel: 1, waitTimeoutSec: 10 }).run();

  it("a finished delegated sheep returns to the pool in a fresh conversation, and the next task takes it without a boot", async () => {
    const { w, shepherd } = pooled(2);
    const [first] = await once(shepherd, "a");
    await shepherd.released();
    const id = parseAgentId(first!.agentId!);
    assert.ok(w.calls.includes(`renew ${id}`), "the sheep was asked for a new session");
    assert.equal(shepherd.registry.warm.get(id)?.state, "idle", "back in the pool, ready");
    assert.equal(shepherd.registry.agents.has(id), false, "in no view of the herd");
    await assert.rejects(
      shepherd.prompt(id, "more"),
      /^ShepherdError: \[unknown_agent\] sheep "a_\w+" finished its delegated task and came back to the warm pool/,
    );
    assert.ok(!w.calls.some((c) => c.startsWith("close")), "nothing closed");
    assert.equal(shepherd.warm().counts.echo?.ready, 1);
    const creates = w.calls.filter((c) => c.startsWith("create")).length;
    const [second] = await once(shepherd, "b");
    assert.equal(second!.text, "done b");
    assert.equal(second!.agentId, id, "the same pi took the next task");
    assert.equal(w.calls.filter((c) => c.startsWith("create")).length, creates, "no pane was made");
    await shepherd.released();
    const deliveries = w.mem(id).deliveries.map((d) => d.kind);
    assert.deepEqual(deliveries, ["prompt", "renew", "prompt", "renew"], "each task in a fresh conversation, and back again after it");
    assert.equal(shepherd.registry.warm.get(id)?.state, "idle");
    await shepherd.dispose();
  });

  it("per host: a sheep that came back on a host serves the next task on that host in that cwd, never one elsewhere", async () => {
    const answering = (w: MemoryWorld) => {
      const submit = w.files.submit;
      w.files.submit = async (agentId, d) => {
        await submit(agentId, d);
        if (d.kind === "prompt") setImmediate(() => w.answer(agentId, d.promptId, `done ${d.text}`));
      };
      return w;
    };
    const here = answering(new MemoryWorld());
    const gpu = answering(new MemoryWorld());
    let shepherd: Shepherd | undefined;
    const table = new HostTable({
      local: { runtime: here.runtime, files: here.files },
      hosts: ["gpu"],
      connect: () => ({ runtime: gpu.runtime, files: gpu.files, down: () => undefined, dir: async (p) => p ?? "/", close: async () => {} }),
      hostOf: (id) => (shepherd!.registry.agents.get(id) ?? shepherd!.registry.warm.get(id))?.host,
    });
    shepherd = new Shepherd({ runtime: new RoutedRuntime(table), files: new RoutedSheepFiles(table), owner: "s", livenessIntervalMs: 50 });
    shepherd.keepWarm({ sizes: {}, memoryMb: 2 * WARM_SHEEP_MB, cwd: "/", placement: "tab", direction: "right", definitions: async () => [def] });
    const task = (t: string, cwd: string, host?: string) =>
      new Delegation(shepherd!, "single", [{ definition: def, task: t, cwd, ...(host ? { host } : {}) }], {
        keepOpen: false,
        maxParallel: 1,
        waitTimeoutSec: 10,
      }).run();
    const creates = (w: MemoryWorld) => w.calls.filter((c) => c.startsWith("create")).length;
    const [far] = await task("a", "/srv", "gpu");
    await shepherd.released();
    assert.ok(gpu.calls.includes(`renew ${far!.agentId}`), "renewed on its own host");
    assert.equal(shepherd.registry.warm.get(far!.agentId!)?.host, "gpu", "in the pool, still on gpu");
    const [local] = await task("b", "/");
    assert.notEqual(local!.agentId, far!.agentId, "a task here boots here");
    assert.equal(creates(here), 1);
    await shepherd.released();
    const [elsewhere] = await task("c", "/other", "gpu");
    assert.notEqual(elsewhere!.agentId, far!.agentId, "another cwd there is not what it ran in");
    await shepherd.released();
    const before = creates(gpu);
    const [again] = await task("d", "/srv", "gpu");
    assert.equal(again!.agentId, far!.agentId, "the same pi there took the task");
    assert.equal(again!.text, "done d");
    assert.equal(creates(gpu), before, "no pane was made there");
    await shepherd.dispose();
  });

  it("the pool's memory counts each pi's resident memory where the host reads it: past the budget, a sheep closes", async () => {
    const { w, shepherd } = pooled(4); // 460 MB
    w.files.residentKb = async () => 300 * 1024;
    const items = await new Delegation(
      shepherd,
      "parallel",
      ["a", "b"].map((task) => ({ definition: def, task, cwd: "/" })),
      {
        keepOpen: false,
        maxParallel: 2,
        waitTimeoutSec: 10,
      },
    ).run();
    await shepherd.released();
    const states = items.map((i) => (shepherd.registry.warm.has(i.agentId!) ? "warm" : shepherd.registry.agents.get(i.agentId!)?.state));
    assert.deepEqual(states.sort(), ["closed", "warm"], "300 MB came back, a second 300 MB would pass 460");
    await shepherd.dispose();
  });

  it("a sheep that came back keeps what its tasks left when the pool closes it", async () => {
    const { w, shepherd } = pooled(2);
    const [item] = await once(shepherd, "a");
    await shepherd.released();
    const id = item!.agentId!;
    assert.equal(shepherd.registry.warm.get(id)?.renewed, true);
    await shepherd.dispose(); // the pool closes its sheep
    assert.ok(!w.calls.includes(`discard ${id}`), "not discarded as a never-prompted warm sheep is");
    assert.equal(w.sheep.get(id)?.cleaned, true, "cleaned up as a closed sheep is: its session and evidence stay");
  });

  it("a sheep whose pi cannot start a new session is closed as before", async () => {
    const { w, shepherd } = pooled(2);
    w.onRenew = "failed";
    const [item] = await once(shepherd, "a");
    await shepherd.released();
    const id = item!.agentId!;
    assert.ok(w.calls.includes(`renew ${id}`));
    assert.equal(shepherd.registry.agents.get(id)?.state, "closed");
    assert.equal(shepherd.registry.agents.get(id)?.label, "echo", "its own label again");
    assert.equal(shepherd.registry.warm.size, 0);
    await shepherd.dispose();
  });

  it("a sheep the pool does not keep is closed: no room, another cwd, a definition changed since", async () => {
    for (const [why, made, cwd] of [
      ["no room", pooled(0), "/"],
      ["another cwd", pooled(2), "/elsewhere"],
      ["changed definition", pooled(2, async () => [{ ...def, tools: ["read"] }]), "/"],
    ] as const) {
      const [item] = await once(made.shepherd, "a", cwd);
      await made.shepherd.released();
      assert.equal(made.shepherd.registry.agents.get(item!.agentId!)?.state, "closed", why);
      assert.ok(!made.w.calls.some((c) => c.startsWith("renew")), `${why}: never asked to renew`);
      await made.shepherd.dispose();
    }
  });
});

describe("a start while a matching sheep renews", () => {
  it("waits for the renewal rather than boot: a chain's next step takes the sheep of the step before", async () => {
    const { w, shepherd } = world((text) => ({ text: `<${text}>` }));
    shepherd.keepWarm({ sizes: {}, memoryMb: 2 * WARM_SHEEP_MB, cwd: "/", placement: "tab", direction: "right", definitions: async () => [def] });
    // The renewal answers a moment later, as a real pi's new session does.
    const submit = w.files.submit;
    w.files.submit = async (agentId, d) => {
      if (d.kind === "renew") await new Promise((r) => setTimeout(r, 30));
      return submit(agentId, d);
    };
    const items = await new Delegation(
      shepherd,
      "chain",
      ["a", "b{previous}", "c{previous}"].map((task) => ({ definition: def, task, cwd: "/" })),
      { keepOpen: false, maxParallel: 1, waitTimeoutSec: 10 },
    ).run();
    await shepherd.released();
    assert.deepEqual(
      items.map((i) => i.text),
      ["<a>", "<b<a>>", "<c<b<a>>>"],
    );
    assert.equal(new Set(items.map((i) => i.agentId)).size, 1, "one pi ran every step");
    assert.equal(w.calls.filter((c) => c.startsWith("create")).length, 1, "one pane for the chain");
    await shepherd.dispose();
  });
});
