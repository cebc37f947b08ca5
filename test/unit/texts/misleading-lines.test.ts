/**
 * Lines a person read wrong (issue 21, item 16): each says now what is so. The /shepherd ones
 * (close twice, settings, did you mean, the slash menu, --force) are in command-run and command-parse.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DelegateItem } from "../../../src/core/delegation/delegate.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { delegateOutcome, delegateText } from "../../../src/actions/delegate-text.ts";
import { reattachText } from "../../../src/texts/format.ts";
import { herdWidgetLines } from "../../../src/texts/widget.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/agents/echo.md" };

describe("what the shepherd says it re-attached", () => {
  it("counts the live sheep taken back, not the closed records nor the pruned, and says nothing when there are none", async () => {
    const world = new MemoryWorld();
    const store = new MemoryStore();
    const first = new Shepherd({ runtime: world.runtime, files: world.files, owner: "one", store, ownerAlive: () => true });
    const live = await first.start({ definition: def, cwd: "/", label: "live" });
    const gone = await first.start({ definition: def, cwd: "/", label: "gone" });
    for (const label of ["old-1", "old-2"]) {
      const a = await first.start({ definition: def, cwd: "/", label });
      await first.close(a.agentId);
    }
    await first.dispose();
    world.killPane(gone.agentId);

    // The same shepherd after a reload: two closed records of its own, one live sheep, one whose pane went.
    const second = new Shepherd({ runtime: world.runtime, files: world.files, owner: "one", store, ownerAlive: () => true });
    const report = await second.attach();
    assert.equal(report.adopted.length, 4, "every record of ours is taken back");
    assert.deepEqual(report.live, [live.agentId]);
    assert.equal(reattachText(report), "pi-shepherd: re-attached 1 sheep; 1 whose panes were gone was pruned.");
    await second.close(live.agentId);
    await second.dispose();

    // Nothing live any more: nothing to say.
    const third = new Shepherd({ runtime: world.runtime, files: world.files, owner: "one", store, ownerAlive: () => true });
    const none = await third.attach();
    assert.deepEqual(none.live, []);
    assert.equal(reattachText(none), undefined);
    await third.dispose();
  });
});

describe("the widget's progress line", () => {
  it("goes once the prompt it told of has settled", async () => {
    const world = new MemoryWorld();
    const clock = new FakeClock();
    const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "one", clock, livenessIntervalMs: 1000 });
    s.deliverTo({ deliver: () => undefined, notice: () => undefined });
    const quiet = async () => {
      await settle();
      await clock.advance(1100, 100);
      await settle();
    };
    const a = await s.start({ definition: def, cwd: "/", label: "a" });
    const p = await s.prompt(a.agentId, "go");
    world.say(a.agentId, { messageId: "m_0000000001", kind: "progress", text: "Halfway there", promptId: p.promptId });
    await quiet();
    assert.match(herdWidgetLines(s.views(), clock.now())!.join("\n"), /↳ Halfway there/, "told while the prompt runs");

    world.answer(a.agentId, p.promptId, "done");
    await s.wait([p.promptId], { timeoutSec: 5 });
    await quiet();
    const lines = herdWidgetLines(s.views(), clock.now())!;
    assert.match(lines[1]!, /^ {2}a · echo · idle/);
    assert.equal(lines.length, 2, `no stale progress under an idle sheep:\n${lines.join("\n")}`);

    // Progress without a prompt id belongs to the running prompt, if there is one.
    world.say(a.agentId, { messageId: "m_0000000002", kind: "progress", text: "Between prompts" });
    await quiet();
    assert.equal(herdWidgetLines(s.views(), clock.now())!.length, 2);
    await s.dispose();
  });
});

describe("a resume of a sheep that never wrote a session", () => {
  it("is [not_resumable] with the reason by its label once it is closed, as by its id", async () => {
    const world = new MemoryWorld();
    const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "one", clock: new FakeClock(), startTimeoutMs: 10_000 });
    const silent = await s.start({ definition: def, cwd: "/", label: "silent" });
    delete world.mem(silent.agentId).card; // it answered nothing, so its host keeps no card
    await s.close(silent.agentId);
    await assert.rejects(
      s.resumable("silent"),
      /^ShepherdError: \[not_resumable\] sheep a_\w+ \(silent\) left no conversation to resume \(it answered no prompt\)/,
    );
    await assert.rejects(s.resumable(silent.agentId), /^ShepherdError: \[not_resumable\] sheep a_\w+ left no conversation/);
    await assert.rejects(s.resumable("nobody"), /^ShepherdError: \[unknown_agent\] no closed or exited sheep labelled "nobody"/);
  });
});

describe("a cancelled task", () => {
  it("says cancelled once, not `cancelled [cancelled] …`", () => {
    const items: DelegateItem[] = [1, 2].map((n) => ({
      agent: "echo",
      task: String(n),
      status: "cancelled",
      error: "[cancelled] the delegation was aborted.",
    }));
    assert.throws(
      () => delegateOutcome("parallel", items, 2),
      (e: Error) =>
        e.message.endsWith("no task succeeded.\n1. echo, 2. echo: [cancelled] the delegation was aborted.") && !/cancelled \[cancelled\]/.test(e.message),
    );
    assert.equal(delegateText("single", items.slice(0, 1), ""), "[cancelled] the delegation was aborted.");
    const failed: DelegateItem = { agent: "echo", task: "t", status: "failed", error: "[provider_error] boom" };
    assert.equal(delegateText("single", [failed], ""), "failed: [provider_error] boom", "another code keeps its status");
  });
});
