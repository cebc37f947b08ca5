/**
 * Notifications end to end for the two event kinds no sheep's turn makes (issue 35): a host's link
 * lost and back (`host`), and a sheep whose pi ended with no close of the shepherd's (`exited:<id>`,
 * sent as `failed`). A real pi shepherd over RPC with a webhook channel at a local HTTP server this
 * test runs, real pi sheep on the scripted model, one on the test's remote host (a network namespace
 * with its own sshd, whose link the test cuts like a pulled cable and restores). Each reaches the
 * webhook naming the host or sheep and why.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RemoteWorld, remoteWorld } from "../support/remote-world.ts";
import type { Scene } from "../support/scene.ts";
import { type WebhookReceiver, webhookReceiver } from "../support/webhook-receiver.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Posted {
  event: string;
  agentId: string | null;
  label: string | null;
  host: string;
  text: string;
}

describe("notifications: a host lost and back, and a sheep whose pi ended, each reach the webhook", { timeout: 600_000 }, () => {
  let rw: RemoteWorld;
  let receiver: WebhookReceiver<Posted>;
  let scene: Scene;
  let posts: Posted[] = [];

  before(async () => {
    receiver = await webhookReceiver<Posted>();
    posts = receiver.posts;
    const { url } = receiver;
    rw = await remoteWorld("notify-host", {
      // Keepalives of 2 s × 3: a dead link is noticed in seconds.
      host: { sshOptions: ["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3"] },
      agent: { shepherdSettings: { notify: { channels: [{ type: "webhook", url, events: ["host", "failed"] }] } } },
    });
    scene = rw.world.scene();
  });

  after(async () => {
    await rw?.world.cleanup();
    await receiver?.close();
  });

  async function until(what: string, ok: (p: Posted) => boolean): Promise<Posted> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const got = posts.find(ok);
      if (got) return got;
      if (Date.now() > deadline) throw new Error(`timed out: no notice ${what}; got ${JSON.stringify(posts)}`);
      await sleep(200);
    }
  }

  it("a host's link cut: one `host` notice says it was lost; restored: one says it is back", async () => {
    await scene.ok({ action: "start", agent: "echo", label: "far", host: "box" });
    await rw.remote.cut();
    try {
      const lost = await until("of the host lost", (p) => p.event === "host" && /lost: /.test(p.text));
      assert.deepEqual([lost.host, lost.agentId, lost.label], ["box", null, null]);
      assert.match(lost.text, /^pi-shepherd: host box /);
    } finally {
      await rw.remote.restore();
    }
    const back = await until("of the host back", (p) => p.event === "host" && /back: connected again/.test(p.text));
    assert.equal(back.host, "box");
    await sleep(12_000);
    const hostNotices = posts.filter((p) => p.event === "host");
    assert.equal(hostNotices.filter((p) => /lost: /.test(p.text)).length, 1, JSON.stringify(hostNotices));
    assert.equal(hostNotices.filter((p) => /back: connected again/.test(p.text)).length, 1, JSON.stringify(hostNotices));
  });

  it("a sheep whose pi was killed outside the shepherd: one notice names it and how pi ended", async () => {
    const sheep = await scene.start("lamb");
    process.kill(sheep.pid, "SIGKILL");
    // A look at the herd finds it gone (no close of the shepherd's ended it).
    for (let i = 0; i < 30 && (await scene.state(sheep.agentId)).state !== "exited"; i++) await sleep(500);
    const got = await until("of the sheep exited", (p) => p.agentId === sheep.agentId);
    assert.deepEqual([got.event, got.label, got.host], ["failed", "lamb", "local"]);
    assert.match(got.text, /pi ended \(|its pane or pi is gone/);
    await sleep(12_000);
    assert.equal(posts.filter((p) => p.agentId === sheep.agentId).length, 1, JSON.stringify(posts));
  });
});
