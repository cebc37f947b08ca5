/**
 * Sheep that come back, with a real pi shepherd over RPC and real pi sheep in a private tmux
 * server: a delegated sheep whose task is done returns to the default warm pool in a fresh
 * conversation of the same pi (pi's own new-session path), and the next task's model request
 * holds nothing of the earlier one. A sheep whose pi cannot start a new session is closed.
 */
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { node22, piCli, repoRoot } from "../support/rpc-shepherd.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { killSheep, sheepPid } from "../support/leftovers.ts";
import type { Scene } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("sheep that come back, with real pi", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let agentDir: string;
  let scene: Scene;
  const pids: number[] = [];

  const readyInPool = async (n: number) => {
    for (let i = 0; i < 240; i++) {
      const warm = (await scene.ok({ action: "herd" })).details.warm as Record<string, { ready: number; starting: number }> | undefined;
      if ((warm?.echo?.ready ?? 0) >= n) return;
      await sleep(250);
    }
    assert.fail(`the pool never held ${n} ready echo sheep`);
  };
  const delegate = async (tag: string) => {
    const r = await scene.ok({ action: "delegate", agent: "echo", task: directive({ reply: `answer ${tag}`, tag }) });
    const [item] = r.details.results as { status: string; text?: string; agentId: string }[];
    assert.equal(item?.status, "completed");
    assert.equal(item.text, `answer ${tag}`);
    pids.push(await sheepPid(agentDir, item.agentId).catch(() => 0));
    return item;
  };

  before(async () => {
    // No pool setting: the default pool boots nothing and holds the sheep that come back.
    world = await e2eWorld("renew-e2e", { agent: { agents: { "echo.md": ECHO_AGENT } } });
    ({ model, agentDir } = world);
    world.defer(() =>
      killSheep(
        agentDir,
        pids.filter((p) => p > 0),
      ),
    );
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("a finished delegated sheep takes the next task in a fresh conversation of the same pi", async () => {
    const first = await delegate("first-task");
    await readyInPool(1);
    const pid = await sheepPid(agentDir, first.agentId);
    const second = await delegate("second-task");
    assert.equal(second.agentId, first.agentId, "the sheep that came back took the next task");
    assert.equal(await sheepPid(agentDir, second.agentId), pid, "in the same pi process");
    const request = model.log.find((l) => l.tag === "second-task");
    assert.ok(request, "the second task reached the model");
    // Nothing of the earlier conversation: one user message, the task's own, and no earlier answer.
    assert.equal(request.userTexts.length, 1, `the request held ${JSON.stringify(request.userTexts)}`);
    assert.match(request.userTexts[0]!, /second-task/);
    assert.ok(!request.userTexts.some((t) => t.includes("first-task")));
    // As many messages as the first task's own request (the system prompt and the task): no earlier answer.
    const earlier = model.log.find((l) => l.tag === "first-task")!;
    assert.equal(request.messageCount, earlier.messageCount, "no earlier assistant message");
    assert.equal(request.system, earlier.system, "the same definition's system prompt");
    // Each conversation kept in a session file of its own.
    await readyInPool(1);
    const files = (await readdir(join(agentDir, "pi-shepherd", "sheep", first.agentId))).filter((n) => n.endsWith(".jsonl"));
    assert.ok(files.length >= 2, `two session files: ${files.join(", ")}`);
  });

  it("a chain's next step waits for the step before's sheep to renew rather than boot one: one pi runs both", async () => {
    const r = await scene.ok({
      action: "delegate",
      chain: [
        { agent: "echo", task: directive({ reply: "step one", tag: "chain-1" }) },
        { agent: "echo", task: directive({ reply: "step two", tag: "chain-2" }) },
      ],
    });
    const items = r.details.results as { status: string; agentId: string }[];
    assert.deepEqual(
      items.map((i) => i.status),
      ["completed", "completed"],
    );
    assert.equal(items[0]!.agentId, items[1]!.agentId, "the second step took the first step's sheep");
    const second = model.log.find((l) => l.tag === "chain-2")!;
    assert.ok(!second.userTexts.some((t) => t.includes("chain-1")), "in a fresh conversation");
  });

  it("the audit log tells the renewal, and read names the sheep's new conversation", async () => {
    const audit = await import("node:fs/promises").then((fs) => fs.readFile(join(agentDir, "pi-shepherd", "audit.ndjson"), "utf8"));
    assert.ok(audit.split("\n").some((l) => l.includes('"event":"renew"')));
  });
});

describe("a sheep whose pi cannot start a new session, with real pi", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let agentDir: string;
  let scene: Scene;

  before(async () => {
    // Every sheep's pi cancels session switches: a renewal is refused there.
    const piCommand = [node22, piCli, "-e", join(repoRoot, "test", "support", "no-new-session-ext.ts")];
    world = await e2eWorld("renew-refused-e2e", { agent: { agents: { "echo.md": ECHO_AGENT }, shepherdSettings: { piCommand } } });
    ({ agentDir } = world);
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("is closed as before, and the next task boots a sheep of its own", async () => {
    const r = await scene.ok({ action: "delegate", agent: "echo", task: directive({ reply: "answer refused", tag: "refused" }) });
    const [item] = r.details.results as { status: string; agentId: string }[];
    assert.equal(item?.status, "completed");
    // While its renewal is under way the sheep is in the pool, where status does not find it: so the
    // audit log, not status, says when the refused renewal has been told and the sheep closed.
    type Event = { event: string; agentId?: string; reason?: string };
    let events: Event[] = [];
    for (let i = 0; i < 120; i++) {
      const audit = await import("node:fs/promises").then((fs) => fs.readFile(join(agentDir, "pi-shepherd", "audit.ndjson"), "utf8"));
      events = audit
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Event);
      if (events.some((e) => e.event === "close" && e.agentId === item.agentId)) break;
      await sleep(250);
    }
    assert.ok(
      events.some((e) => e.event === "failure" && e.agentId === item.agentId && e.reason === "renew_failed"),
      "the refused renewal is told",
    );
    assert.ok(
      events.some((e) => e.event === "close" && e.agentId === item.agentId),
      "then the sheep is closed",
    );
    const warm = (await scene.ok({ action: "herd" })).details.warm as Record<string, { ready: number }> | undefined;
    assert.equal(warm?.echo?.ready ?? 0, 0, "nothing came back");
    const second = await scene.ok({ action: "delegate", agent: "echo", task: directive({ reply: "answer again", tag: "again" }) });
    const [next] = second.details.results as { agentId: string }[];
    assert.notEqual(next?.agentId, item.agentId);
  });
});
