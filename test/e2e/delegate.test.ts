/**
 * Delegation (single, parallel, chain) on real pi sheep, driven by a real pi shepherd over RPC.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { RpcShepherd, ToolOutcome } from "../support/rpc-shepherd.ts";
import { directive, type LoggedRequest, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

/** The most requests that were being answered at the same moment. */
function maxConcurrent(reqs: LoggedRequest[]): number {
  const edges = reqs.flatMap((r) => [
    { at: r.receivedAt, d: 1 },
    { at: r.lastByteAt ?? Infinity, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of edges) {
    now += e.d;
    max = Math.max(max, now);
  }
  return max;
}

describe("delegate with real pi sheep", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let t: PrivateTmux;
  let model: ScriptedModel;
  let shepherd: RpcShepherd;

  const panes = async () => (await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n");
  /** The panes once the delegated sheep closed: they close after the call returned, off its path. */
  const closedDown = async () => {
    for (let i = 0; i < 100 && (await panes()).length > 1; i++) await new Promise((r) => setTimeout(r, 100));
    return panes();
  };
  const ok = (args: unknown): Promise<ToolOutcome> => shepherd.ok(args);
  type Item = { agent: string; label?: string; task: string; status: string; text?: string; error?: string; agentId?: string; step?: number };

  before(async () => {
    // No warm pool (warmMemory 0): these sheep close after their tasks; sheep that come back are renew.test.ts's.
    world = await e2eWorld("delegate", { agent: { shepherdSettings: { maxParallel: 2, warmMemory: 0 } }, work: true });
    ({ tmux: t, model } = world);
    shepherd = world.shepherd();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("parallel: 5 tasks with maxParallel 2 never answer more than 2 at once, come back in order, and show progress", async () => {
    const tasks = [1, 2, 3, 4, 5].map((i) => ({ agent: "echo", task: directive({ reply: `result ${i}`, delayMs: 1200 + (5 - i) * 200, tag: `P${i}` }) }));
    const r = await ok({ action: "delegate", tasks });
    const items = r.details.results as Item[];
    assert.deepEqual(
      items.map((i) => [i.status, i.text]),
      [1, 2, 3, 4, 5].map((i) => ["completed", `result ${i}`]),
    );
    assert.equal(r.details.mode, "parallel");
    assert.match(r.text, /^Parallel: 5\/5 succeeded\./);
    const reqs = model.log.filter((l) => l.tag?.startsWith("P"));
    assert.equal(reqs.length, 5);
    assert.equal(maxConcurrent(reqs), 2, "two sheep worked at once, never more");
    assert.ok(r.updates.length >= 2, "progress updates arrived while it ran");
    const last = r.updates[r.updates.length - 1]!.details as { progress: { total: number; items: unknown[] } };
    assert.equal(last.progress.total, 5);
    assert.ok(r.updates.some((u) => /^\d\/5 done$/.test(u.text)));
    // Two sheep of one agent at once are told apart by their labels, in progress and results.
    type Progress = { progress: { items: { label?: string; state: string; since?: string }[] } };
    const both = r.updates.map((u) => (u.details as Progress).progress.items.filter((i) => i.state === "working"));
    assert.ok(
      both.some((w) => w.length === 2 && w[0]!.label !== w[1]!.label && w.every((i) => typeof i.since === "string")),
      "two working sheep, two labels, each with its clock",
    );
    assert.ok(
      items.every((i) => /^echo(-\d+)?$/.test(i.label ?? "")),
      JSON.stringify(items.map((i) => i.label)),
    );
    assert.match(r.text, /\n## 2\. echo(-2)?(?: \(echo\))? · completed\nresult 2\n/);
    // Updates stop when the call ends: none after tool_execution_end.
    const endAt = shepherd.events.findLastIndex((e) => e.type === "tool_execution_end");
    assert.ok(!shepherd.events.slice(endAt).some((e) => e.type === "tool_execution_update"));
    assert.deepEqual(await closedDown(), [t.userPane], "every delegated sheep was closed");
  });

  it("chain: each step gets the previous step's exact text", async () => {
    const r = await ok({
      action: "delegate",
      chain: [
        { agent: "echo", task: directive({ reply: "alpha 'one' ü", tag: "C1" }) },
        { agent: "echo", task: '#script {"reply":"got [{previous}]","tag":"C2"}' },
        { agent: "echo", task: '#script {"reply":"final <{previous}>","tag":"C3"}' },
      ],
    });
    const items = r.details.results as Item[];
    assert.deepEqual(
      items.map((i) => [i.step, i.status, i.text]),
      [
        [1, "completed", "alpha 'one' ü"],
        [2, "completed", "got [alpha 'one' ü]"],
        [3, "completed", "final <got [alpha 'one' ü]>"],
      ],
    );
    assert.equal(model.log.find((l) => l.tag === "C3")!.lastUserText, '#script {"reply":"final <got [alpha \'one\' ü]>","tag":"C3"}');
    assert.match(r.text, /final <got \[alpha 'one' ü\]>$/);
  });

  it("chain: a failing step stops the chain and says where", async () => {
    const r = await ok({
      action: "delegate",
      chain: [
        { agent: "echo", task: directive({ reply: "fine", tag: "F1" }) },
        { agent: "echo", task: directive({ fail: 500, message: "step two broke", tag: "F2" }) },
        { agent: "echo", task: directive({ reply: "never", tag: "F3" }) },
      ],
    });
    const items = r.details.results as Item[];
    assert.deepEqual(
      items.map((i) => i.status),
      ["completed", "failed"],
    );
    // A step's sheep closes after its answer, off the chain's path: the next step's may get the next label.
    assert.match(r.text, /^Chain stopped at step 2 \((echo-\d+ \()?echo\)?\): \[provider_error\] .*step two broke/);
    assert.equal(
      model.log.some((l) => l.tag === "F3"),
      false,
      "step 3 never ran",
    );
  });

  it("a delegate whose every task failed throws", async () => {
    const r = await shepherd.call({ action: "delegate", agent: "echo", task: directive({ fail: 500, message: "all down" }) });
    assert.equal(r.isError, true);
    assert.match(r.text, /^\[delegate_failed\] single delegation: no task succeeded\.\n1\. echo(-\d+ \(echo\))?: failed .*all down/);
    const refused = await shepherd.call({ action: "delegate", tasks: Array.from({ length: 9 }, () => ({ agent: "echo", task: "x" })) });
    assert.match(refused.text, /^\[invalid_params\] 9 tasks given; at most 8/);
  });

  it("single with keepOpen leaves a live sheep", async () => {
    const r = await ok({ action: "delegate", agent: "echo", task: directive({ reply: "kept" }), keepOpen: true });
    assert.equal(r.text, "kept");
    const [item] = r.details.results as Item[];
    const status = (await ok({ action: "status", agentId: item!.agentId })).details.status as { state: string; paneAlive: boolean };
    assert.deepEqual([status.state, status.paneAlive], ["idle", true]);
    await ok({ action: "close", agentId: item!.agentId });
  });

  it("the herd widget lists sheep while there are any and is removed when the herd is empty", async () => {
    const widgets = shepherd.events.filter((e) => e.type === "extension_ui_request" && e.method === "setWidget") as { widgetLines?: string[] }[];
    assert.ok(widgets.some((w) => w.widgetLines?.[0]?.startsWith("🐑 herd") && w.widgetLines.some((l) => /^ {2}echo · (working \d+s|idle)$/.test(l))));
    assert.equal(widgets[widgets.length - 1]!.widgetLines, undefined, "the widget was cleared");
  });

  it("abort during a parallel run closes its sheep", async () => {
    const tasks = [1, 2, 3].map((i) => ({ agent: "echo", task: directive({ reply: "too slow", delayMs: 60_000, tag: `A${i}` }) }));
    const end = shepherd.next((e) => e.type === "tool_execution_end" && e.toolName === "shepherd");
    const settled = shepherd.next((e) => e.type === "agent_end");
    const accepted = await shepherd.command({
      type: "prompt",
      message: directive({ tool: { name: "shepherd", arguments: { action: "delegate", tasks } }, afterTool: "done" }),
    });
    assert.equal(accepted.success, true);
    for (let i = 0; i < 600 && model.log.filter((l) => l.tag?.startsWith("A")).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(model.log.filter((l) => l.tag?.startsWith("A")).length, 2, "two sheep were working when the abort came");
    await shepherd.command({ type: "abort" });
    const e = await end;
    await settled;
    assert.equal(e.isError, true);
    const text = ((e.result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");
    // Said once for the two sheep that were working, once for the task that never started.
    assert.match(
      text,
      /^\[aborted\] parallel delegation: no task succeeded\.\n1\. echo(-\d+ \(echo\))?, 2\. echo(-\d+ \(echo\))?: \[cancelled\] the delegation was aborted\.\n3\. echo(-\d+ \(echo\))?: \[cancelled\] the delegation was aborted before this task started\.$/,
    );
    assert.deepEqual(await closedDown(), [t.userPane], "the aborted delegation closed every sheep it started");
    assert.equal(model.log.filter((l) => l.tag === "A3").length, 0, "the queued task never started");
  });
});
