/**
 * What a sheep writes cannot take the shepherd down (issue 31, items 1 and 6), on a real pi
 * shepherd with the panel on and a real sheep: while the sheep's pi works, its outbox file for
 * the prompt is written as a hostile sheep could (usage.input an 8 MiB string, cost as text,
 * startedAt −271821, finishedAt +275760) and its message log gets a message whose `at` is 3.5 MiB
 * and 40 progress lines. The prompt settles with the answer; the API, /metrics, the event stream
 * and state.json stay small and valid: numbers are numbers, times are instants, no route 500s,
 * and the event stream carries the messages that came after.
 */
import assert from "node:assert/strict";
import { appendFile, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sheepDir, sheepLayout } from "../../src/protocol/layout.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { panelOn } from "../support/panel-browser.ts";
import { ask, openEvents } from "../support/panel-world.ts";
import type { Scene } from "../support/scene.ts";

const MiB = 1024 * 1024;

describe("e2e: hostile data a sheep writes", () => {
  let world: E2eWorld;
  let scene: Scene;
  let port: number;
  let headers: Record<string, string>;

  before(async () => {
    world = await e2eWorld("hostile-data");
    scene = world.scene();
    const url = await panelOn(scene.shepherd);
    port = Number(new URL(url).port);
    headers = { authorization: `Bearer ${new URL(url).hash.replace(/^#token=/, "")}` };
  });
  after(async () => {
    await world?.cleanup();
  });

  const get = (path: string) => ask(port, { path, headers });

  it("an outbox file and message log written to harm: the answer settles, and every view stays bounded and valid", { timeout: 180_000 }, async () => {
    const { agentId } = await scene.start("hostile");
    const events = await openEvents(port, headers);
    assert.equal(events.status, 200);
    // The sheep's pi takes 30 s to answer: the hostile file is there long before.
    const promptId = await scene.prompt(agentId, '#script {"reply":"the real answer","delayMs":30000}');
    const layout = sheepLayout(sheepDir(scene.agentDir, agentId));
    const tmp = join(layout.dir, "hostile.tmp");
    await writeFile(
      tmp,
      JSON.stringify({
        promptId,
        status: "completed",
        text: "an answer <img src=x onerror=alert(1)>",
        usage: { input: `05${"<img src=x>".repeat(Math.ceil((8 * MiB) / 11))}`, output: 3, cost: "00.011e4000.5" },
        startedAt: "-271821-04-20T00:00:00.000Z",
        finishedAt: "+275760-09-13T00:00:00.000Z",
        model: "m".repeat(MiB),
      }),
    );
    await rename(tmp, layout.outboxFile(promptId));
    const line = (i: number, at: string) => `${JSON.stringify({ messageId: `m_${String(i).padStart(10, "0")}`, kind: "progress", text: `line ${i}`, at })}\n`;
    await appendFile(layout.messages, line(0, "2".repeat(3.5 * MiB)));
    for (let i = 1; i <= 40; i++) await appendFile(layout.messages, line(i, i % 2 ? "-271821-04-20T00:00:00.000Z" : new Date().toISOString()));

    const item = await scene.wait(promptId, 20);
    assert.equal(item.status, "completed", JSON.stringify(item).slice(0, 500));
    assert.equal(item.text, "an answer <img src=x onerror=alert(1)>");

    // The stream was not ended by the 3.5 MiB `at`: the messages after it reach it, each event small.
    const last = await events.next((e) => e.event === "message" && e.data.includes("line 40"), 0, 30_000);
    assert.ok(last);
    assert.equal(events.events.filter((e) => e.event === "message" && e.data.includes('"m_0000000000"')).length, 0, "the message with no time is none");
    for (const e of events.events) assert.ok(Buffer.byteLength(e.data) <= 128 * 1024, `an event of ${Buffer.byteLength(e.data)} bytes`);
    events.close();

    const list = await get("/api/v1/sheep");
    assert.equal(list.status, 200);
    assert.ok(Buffer.byteLength(list.text) < 64 * 1024, `GET /api/v1/sheep answered ${Buffer.byteLength(list.text)} bytes`);
    const fleet = list.json() as { sheep: { agentId: string; usage: Record<string, unknown> }[]; totals: Record<string, unknown> };
    const mine = fleet.sheep.find((s) => s.agentId === agentId)!;
    assert.deepEqual(mine.usage, { input: 0, output: 3 }, "the counts that are counts, and nothing of the text");
    for (const k of ["input", "output", "cost"]) assert.equal(typeof fleet.totals[k], "number", `totals.${k}`);

    const detail = await get(`/api/v1/sheep/${agentId}`);
    assert.equal(detail.status, 200, detail.text.slice(0, 300));
    const prompt = (detail.json() as { prompts: { promptId: string; startedAt?: string; finishedAt?: string }[] }).prompts.find(
      (p) => p.promptId === promptId,
    )!;
    for (const t of [prompt.startedAt, prompt.finishedAt]) if (t !== undefined) assert.ok(Number.isFinite(Date.parse(t)), String(t));

    const messages = await get(`/api/v1/sheep/${agentId}/messages`);
    assert.equal(messages.status, 200);
    const listed = (messages.json() as { messages: { at: string }[] }).messages;
    assert.equal(listed.length, 40);
    for (const m of listed) assert.ok(Date.parse(m.at) >= Date.parse("2000-01-01T00:00:00.000Z") && Date.parse(m.at) <= Date.now() + 86_400_000, m.at);

    const metrics = (await get("/metrics")).text;
    const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(metrics)?.[1]);
    assert.equal(Number(/^pi_shepherd_tokens_total\{kind="output"\} (\S+)$/m.exec(metrics)?.[1]), 3, metrics);
    assert.equal(Number(/^pi_shepherd_tokens_total\{kind="input"\} (\S+)$/m.exec(metrics)?.[1]), 0);
    assert.equal(sample("pi_shepherd_cost_total"), 0);
    const sum = sample("pi_shepherd_prompt_duration_seconds_sum");
    assert.ok(Number.isFinite(sum) && sum >= 0 && sum < 1e10, `duration sum ${sum}`);

    const stateFile = join(scene.agentDir, "pi-shepherd", "state.json");
    assert.ok((await stat(stateFile)).size < MiB, `state.json is ${(await stat(stateFile)).size} bytes`);
    const state = JSON.parse(await readFile(stateFile, "utf8")) as { prompts: { promptId: string; settled?: { usage?: unknown; durationMs?: number } }[] };
    const stored = state.prompts.find((p) => p.promptId === promptId)!;
    assert.deepEqual(stored.settled?.usage, { output: 3 });
    await scene.ok({ action: "close", agentId });
  });
});
