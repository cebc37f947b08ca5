import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a.md" };

describe("re-attaching from the store", () => {
  it("a new shepherd instance takes back its sheep, waits for a prompt sent before, and prunes the dead", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const alive = new Set(["old"]);
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "old", store, ownerAlive: (o) => alive.has(o) });
    const a = await first.start({ definition: def, cwd: "/" });
    const b = await first.start({ definition: def, cwd: "/" });
    const p = await first.prompt(a.agentId, "before the reload");
    const pb = await first.prompt(b.agentId, "doomed");
    first.dispose();
    alive.delete("old"); // the old shepherd is gone
    world.killPane(b.agentId);
    world.answer(a.agentId, p.promptId, "answered while nobody watched");

    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "new", store, ownerAlive: (o) => o === "new" });
    const report = await second.attach();
    assert.deepEqual(report.adopted.sort(), [a.agentId, b.agentId].sort());
    assert.deepEqual(report.pruned, [b.agentId]);
    const [r] = await second.wait([p.promptId], { timeoutSec: 1 });
    assert.deepEqual([r!.status, r!.text], ["completed", "answered while nobody watched"]);
    assert.equal((await second.status(a.agentId)).label, "echo");
    assert.deepEqual(
      store.state.agents.map((x) => [x.agentId, x.owner]),
      [[a.agentId, "new"]],
    );
    await assert.rejects(second.status(b.agentId), /\[unknown_agent\]/);
    assert.equal(
      store.state.prompts.some((x) => x.promptId === pb.promptId),
      false,
    );
  });

  it("sheep of a live shepherd stay its own: another refuses them with not_owned", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const owner = new Shepherd({ runtime: world.runtime, files: world.files, owner: "one", store, ownerAlive: () => true });
    const a = await owner.start({ definition: def, cwd: "/" });
    const other = new Shepherd({ runtime: world.runtime, files: world.files, owner: "two", store, ownerAlive: () => true });
    assert.deepEqual((await other.attach()).adopted, []);
    await assert.rejects(other.close(a.agentId), /^ShepherdError: \[not_owned\] sheep a_\w+ \(echo\) belongs to another running shepherd/);
    assert.equal(world.calls.filter((c) => c.startsWith("close")).length, 0);
  });
});

describe("re-attaching a sheep caught during start", () => {
  it("keeps one that became ready and closes one that did not", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "old", store, ownerAlive: () => false });
    const ready = await first.start({ definition: def, cwd: "/" });
    world.onLaunch = "never";
    const stuck = first.start({ definition: def, cwd: "/" }).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    // The shepherd died here: both records still say "starting" on disk.
    for (const a of store.state.agents) a.state = "starting";
    store.dead.add("old");
    first.dispose();
    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "new", store, ownerAlive: (o) => o === "new" });
    const report = await second.attach();
    const stuckId = store.state.agents.find((a) => a.agentId !== ready.agentId)?.agentId;
    assert.equal(stuckId, undefined, "the never-ready sheep was dropped");
    assert.equal(report.pruned.length, 1);
    assert.equal((await second.status(ready.agentId)).state, "idle");
    assert.equal([...world.panes.values()].filter((p) => p.alive).length, 1, "only the ready sheep's pane is left");
    void stuck;
  });

  it("closes one that became ready but whose pi is gone, even while the multiplexer still shows its pane running", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "old", store, ownerAlive: () => false });
    const a = await first.start({ definition: def, cwd: "/" });
    for (const x of store.state.agents) x.state = "starting";
    store.dead.add("old");
    first.dispose();
    // tmux missed pi's SIGCHLD: the pane looks alive, but the pid the sheep reported is gone.
    world.mem(a.agentId).snapshot.piGone = true;
    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "new", store, ownerAlive: (o) => o === "new" });
    const report = await second.attach();
    assert.deepEqual(report.pruned, [a.agentId], "a sheep whose pi is gone is not kept as idle");
    assert.equal([...world.panes.values()].filter((p) => p.alive).length, 0, "its pane is closed");
  });
});
