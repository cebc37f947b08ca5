/**
 * A follow-up sent while the sheep is busy, as a person meets it in the panel's API and the audit
 * log: it started when the sheep took it (after the prompt before it ended), and its duration
 * counts from then. Real pi shepherd over RPC, real pi sheep in tmux on a private socket, scripted
 * model (each reply held back for a known while), the panel on for real.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { AuditEvent } from "../../src/ports/audit.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { panelOn } from "../support/panel-browser.ts";
import { ask } from "../support/panel-world.ts";
import { type Item, type Scene, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

type ApiPrompt = { promptId: string; status: string; startedAt: string; finishedAt?: string };

describe("a queued follow-up's times", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let scene: Scene;

  before(async () => {
    world = await e2eWorld("queued-times", { work: true });
    ({ model } = world);
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("starts when the sheep takes it, after the prompt before it; its durationMs (wait, API, audit) counts from then", async () => {
    const sheep = await scene.start("queued");
    const first = await scene.prompt(sheep.agentId, directive({ reply: "one", delayMs: 4000, tag: "T1" }));
    await untilLogged(model, "T1");
    const follow = (
      await scene.ok({ action: "prompt", agentId: sheep.agentId, deliverAs: "followUp", message: directive({ reply: "two", delayMs: 1500, tag: "T2" }) })
    ).details.prompt as { promptId: string; submittedAt: string };
    const results = (await scene.ok({ action: "wait", promptIds: [first, follow.promptId], timeout: 60 })).details.results as (Item & {
      durationMs?: number;
    })[];
    assert.deepEqual(
      results.map((r) => [r.status, r.text]),
      [
        ["completed", "one"],
        ["completed", "two"],
      ],
    );
    const [t1, t2] = ["T1", "T2"].map((tag) => model.log.find((l) => l.tag === tag)!);
    assert.ok(t2!.receivedAt >= t1!.lastByteAt!, "the follow-up reached the model after the first answer");

    // The panel's API, as the page reads it.
    const url = new URL(await panelOn(scene.shepherd));
    const token = new URLSearchParams(url.hash.slice(1)).get("token")!;
    const a = await ask(Number(url.port), {
      path: `/api/v1/sheep/${sheep.agentId}`,
      headers: { authorization: `Bearer ${token}`, origin: url.origin },
    });
    assert.equal(a.status, 200, a.text);
    const prompts = (a.json() as { prompts: ApiPrompt[] }).prompts;
    const p1 = prompts.find((p) => p.promptId === first)!;
    const p2 = prompts.find((p) => p.promptId === follow.promptId)!;
    assert.ok(p1.finishedAt && p2.finishedAt, `both finished: ${JSON.stringify(prompts)}`);
    assert.ok(Date.parse(p2.startedAt) >= Date.parse(p1.finishedAt!), `the follow-up started after the first one finished: ${JSON.stringify(prompts)}`);
    assert.ok(Date.parse(p2.startedAt) > Date.parse(follow.submittedAt), "it started later than it was sent");
    assert.ok(Date.parse(p2.finishedAt!) >= t2!.lastByteAt! - 1000, `it finished after its answer streamed: ${JSON.stringify(prompts)}`);

    // Its duration: its own turn (the model held its reply 1.5 s), not the time since it was sent (over 4 s) nor a few ms.
    const d2 = results[1]!.durationMs!;
    assert.ok(d2 >= 1500, `the follow-up's durationMs ${d2} covers its own turn`);
    assert.ok(
      d2 < Date.parse(p2.finishedAt!) - Date.parse(follow.submittedAt),
      `durationMs ${d2} counts from when the sheep took it, not from when it was sent`,
    );
    assert.equal(Date.parse(p2.finishedAt!) - Date.parse(p2.startedAt), d2, "the API's times and durationMs agree");
    const audit = (await readFile(join(world!.agentDir, "pi-shepherd", "audit.ndjson"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    const result = audit.find((e) => e.event === "result" && e.promptId === follow.promptId)!;
    assert.equal(result.durationMs, d2, "the audit log says the same durationMs");
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });
});
