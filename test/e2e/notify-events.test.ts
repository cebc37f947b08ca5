/**
 * Notifications end to end for the events a sheep makes besides questions and budgets (issue 35): a
 * sheep waiting on a pi dialog (`blocked`), a prompt that failed (`failed`), and an answer nobody
 * received (`answer`: a person's `/shepherd prompt` that finished while nobody waited). A real pi
 * shepherd over RPC with a webhook channel at a local HTTP server this test runs; real pi sheep in
 * tmux on the scripted model, given a dialog tool (test/support/dialog-ext.ts) through piCommand.
 * Each event reaches the webhook as one notice naming the sheep and why, and once: the courier's
 * looks, the widget's refreshes and the notice window pass without a second.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { node22, piCli, repoRoot } from "../support/rpc-shepherd.ts";
import { type Scene, untilLogged } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";
import { type WebhookReceiver, webhookReceiver } from "../support/webhook-receiver.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Posted {
  event: string;
  id: string;
  agentId: string | null;
  label: string | null;
  host: string;
  text: string;
}

describe("notifications: a dialog, a failed prompt and an answer nobody received each reach the webhook once", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let receiver: WebhookReceiver<Posted>;
  let scene: Scene;
  let posts: Posted[] = [];

  before(async () => {
    receiver = await webhookReceiver<Posted>();
    posts = receiver.posts;
    const { url } = receiver;
    world = await e2eWorld("notify-events", {
      agent: {
        shepherdSettings: {
          piCommand: [node22, piCli, "-e", join(repoRoot, "test", "support", "dialog-ext.ts")],
          notify: { channels: [{ type: "webhook", url, events: ["blocked", "failed", "answer"] }] },
        },
      },
      work: true,
    });
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
    await receiver?.close();
  });

  const about = (agentId: string) => posts.filter((p) => p.agentId === agentId);

  async function firstNotice(agentId: string): Promise<Posted> {
    const deadline = Date.now() + 60_000;
    while (about(agentId).length === 0) {
      if (Date.now() > deadline) throw new Error(`timed out: no notice about ${agentId}; got ${JSON.stringify(posts)}`);
      await sleep(200);
    }
    return about(agentId)[0]!;
  }

  /**
   * The courier's looks (every fifth quiet second), the widget's refreshes and the 10 s notice window
   * pass: still the one notice, listing its event once.
   */
  async function stillOnce(agentId: string): Promise<void> {
    await sleep(15_000);
    assert.equal(about(agentId).length, 1, `one notice: ${JSON.stringify(about(agentId))}`);
    assert.equal(
      about(agentId)[0]!
        .text.split("\n")
        .filter((l) => l.startsWith("- ")).length,
      1,
      `the event listed once: ${about(agentId)[0]!.text}`,
    );
  }

  it("a sheep waiting on a dialog: one `blocked` notice naming the sheep, the dialog's question and how to look", async () => {
    const question = "Open the north gate now?";
    const sheep = await scene.start("gatekeeper");
    await scene.prompt(sheep.agentId, directive({ tool: { name: "ask_person", arguments: { question } }, afterTool: "gate opened", tag: "BL" }));
    await untilLogged(world!.model, "BL");
    // Nobody waits on this prompt: the shepherd's own looks at its herd find the dialog.
    const got = await firstNotice(sheep.agentId);
    assert.deepEqual([got.event, got.label, got.host], ["blocked", "gatekeeper", "local"]);
    assert.match(got.text, new RegExp(`^pi-shepherd: gatekeeper \\(${sheep.agentId}\\) on local waits on a dialog\\n`));
    assert.match(got.text, /\n- waits on a dialog: Open the north gate now\?\n/);
    assert.match(got.text, new RegExp(`\\nAct: /shepherd read ${sheep.agentId} --source screen$`));
    await stillOnce(sheep.agentId);
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("a prompt that failed: one `failed` notice naming the sheep and the model's error", async () => {
    const sheep = await scene.start("breaker");
    await scene.prompt(sheep.agentId, directive({ fail: 500, message: "the pasture flooded", tag: "FL" }));
    await untilLogged(world!.model, "FL");
    const got = await firstNotice(sheep.agentId);
    assert.deepEqual([got.event, got.label], ["failed", "breaker"]);
    assert.match(got.text, new RegExp(`^pi-shepherd: breaker \\(${sheep.agentId}\\) on local failed\\n`));
    assert.match(got.text, /\n- failed: \[provider_error\] [^\n]*the pasture flooded/);
    assert.match(got.text, new RegExp(`\\nAct: /shepherd status ${sheep.agentId}$`));
    await stillOnce(sheep.agentId);
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });

  it("an answer nobody received: a person's /shepherd prompt that finished while nobody waited is one `answer` notice", async () => {
    const sheep = await scene.start("shearer");
    await scene.shepherd.slash(`/shepherd prompt shearer ${directive({ reply: "Sheared twelve.", tag: "AN" })}`);
    await untilLogged(world!.model, "AN");
    const got = await firstNotice(sheep.agentId);
    assert.deepEqual([got.event, got.label], ["answer", "shearer"]);
    assert.match(got.text, new RegExp(`^pi-shepherd: shearer \\(${sheep.agentId}\\) on local has an answer nobody received\\n`));
    assert.match(got.text, /\n- has an answer nobody received: answered \(completed\); nobody waited for it\n/);
    assert.match(got.text, new RegExp(`\\nAct: /shepherd wait ${sheep.agentId}$`));
    await stillOnce(sheep.agentId);
    await scene.ok({ action: "close", agentId: sheep.agentId });
  });
});
