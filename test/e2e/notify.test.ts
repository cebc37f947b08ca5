/**
 * Notifications end to end (issue 35): a real pi shepherd over RPC with a webhook channel pointed at
 * a local HTTP server this test starts; real pi sheep in tmux on a private socket, scripted model.
 * A sheep that asks a question produces exactly one POST with the fixed fields (ntfy its POST, the
 * terminal pi's own notification); 40 questions of one sheep are a handful of notices; a receiver down
 * for 30 s gets the notice after, once; a notice written by a shepherd that was killed before it sent
 * is sent, once, by the next shepherd.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { untilLogged } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Posted {
  event: string;
  id: string;
  agentId: string | null;
  label: string | null;
  host: string;
  text: string;
  at: string;
  link: string | null;
}

describe("notifications: a webhook gets each notice once, also across a killed shepherd", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let receiver: Server;
  /** What the webhook took (answered 204), and what ntfy's topic took. */
  const posts: { body: string; contentType: string | undefined }[] = [];
  const ntfy: { body: string; title: string | undefined; priority: string | undefined }[] = [];
  /** The webhook's receiver is down (503) while this is set: what it refused, by notice id. */
  let down = false;
  const refused: string[] = [];

  before(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        if (req.url === "/topic") {
          ntfy.push({ body, title: req.headers.title as string | undefined, priority: req.headers.priority as string | undefined });
        } else if (down) {
          refused.push(body);
          res.writeHead(503).end();
          return;
        } else posts.push({ body, contentType: req.headers["content-type"] });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const url = `${base}/hook`;
    world = await e2eWorld("notify", {
      agent: {
        agents: { "echo.md": ECHO_AGENT },
        shepherdSettings: {
          notify: {
            channels: [
              { type: "webhook", url },
              { type: "terminal", events: ["question"] },
              { type: "ntfy", url: `${base}/topic`, events: ["question"] },
            ],
          },
        },
      },
      work: true,
    });
  });

  after(async () => {
    await world?.cleanup();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  const about = (agentId: string) => posts.map((p) => JSON.parse(p.body) as Posted).filter((p) => p.agentId === agentId);

  async function until<T>(what: string, fn: () => T | undefined, ms: number): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
      await sleep(200);
    }
  }

  const ask = (text: string, tag: string) => directive({ tools: [{ name: "shepherd_message", arguments: { kind: "question", text } }], reply: "asked", tag });

  it("a sheep that asks a question: exactly one webhook POST naming the sheep, its host, the question and how to reply", async () => {
    const scene = world!.scene();
    const sheep = await scene.start("asker");
    await scene.ok({ action: "prompt", agentId: sheep.agentId, message: ask("Which pasture, north or south?", "Q1") });
    await untilLogged(world!.model, "Q1");
    const [got] = await until("the webhook's POST", () => (about(sheep.agentId).length > 0 ? about(sheep.agentId) : undefined), 60_000);
    assert.equal(posts.at(-1)!.contentType, "application/json");
    assert.deepEqual(Object.keys(got!).sort(), ["agentId", "at", "event", "host", "id", "label", "link", "text"]);
    assert.deepEqual([got!.event, got!.agentId, got!.label, got!.host, got!.link], ["question", sheep.agentId, "asker", "local", null]);
    assert.match(got!.text, /^pi-shepherd: asker \(a_\w+\) on local asks a question\n- asks a question: Which pasture, north or south\?/);
    assert.match(got!.text, new RegExp(`Act: /shepherd reply ${sheep.agentId} m_\\w+ <your answer>`));
    assert.ok(Date.parse(got!.at) > 0);
    // The terminal channel: pi's own notification, the same notice.
    const shown = await scene.shepherd.until(
      (e) => e.type === "extension_ui_request" && e.method === "notify" && String(e.message).startsWith("pi-shepherd: asker"),
      30_000,
    );
    assert.match(String(shown.message), /Which pasture, north or south\?[\s\S]*Act: \/shepherd reply a_\w+ m_\w+ <your answer>/);
    // The ntfy channel: the text as the body, the title and priority in headers.
    const topic = await until("the ntfy POST", () => ntfy.find((x) => x.body.includes("Which pasture")), 30_000);
    assert.match(topic.title ?? "", /^pi-shepherd: asker \(a_\w+\) on local asks a question$/);
    assert.equal(topic.priority, "high");
    // The courier looks again and again, and the notice window and rate limit pass: still one.
    await sleep(15_000);
    assert.equal(about(sheep.agentId).length, 1, "sent once");
    await scene.ok({ action: "close", agentId: sheep.agentId });
    await scene.shepherd.stop();
  });

  it("40 questions of one sheep within a minute arrive as at most the stated number of notices (6 a minute; here one)", async () => {
    const scene = world!.scene();
    const sheep = await scene.start("flood");
    const tools = Array.from({ length: 40 }, (_, i) => ({ name: "shepherd_message", arguments: { kind: "question", text: `Question ${i + 1}?` } }));
    await scene.ok({ action: "prompt", agentId: sheep.agentId, message: directive({ tools, reply: "asked", tag: "F1" }) });
    await untilLogged(world!.model, "F1");
    await until("the first notice", () => (about(sheep.agentId).length > 0 ? true : undefined), 60_000);
    await sleep(20_000);
    const got = about(sheep.agentId);
    assert.ok(got.length >= 1 && got.length <= 6, `${got.length} notices`);
    const listed = got.reduce((n, x) => n + x.text.split("\n").filter((l) => /^- asks a question: Question \d+\?$/.test(l)).length, 0);
    const counted = got.reduce((n, x) => n + Number(/- and (\d+) more of flood/.exec(x.text)?.[1] ?? 0), 0);
    assert.equal(listed + counted, 40, "every question is in a notice, listed or counted");
    await scene.ok({ action: "close", agentId: sheep.agentId });
    await scene.shepherd.stop();
  });

  it("a receiver down for 30 s gets the notice after, once, with the same id as the tries it refused", async () => {
    const scene = world!.scene();
    const sheep = await scene.start("patient");
    down = true;
    await scene.ok({ action: "prompt", agentId: sheep.agentId, message: ask("Gate open or shut?", "D1") });
    await until("a refused try", () => (refused.some((b) => b.includes("Gate open or shut?")) ? true : undefined), 60_000);
    await sleep(30_000);
    down = false;
    const [got] = await until("the POST once the receiver is back", () => (about(sheep.agentId).length > 0 ? about(sheep.agentId) : undefined), 120_000);
    const tries = refused.map((b) => JSON.parse(b) as Posted).filter((x) => x.agentId === sheep.agentId);
    assert.ok(tries.length >= 2, `${tries.length} refused tries: retried while down`);
    assert.ok(tries.length <= 6, `${tries.length} refused tries: backoff and the channel's rate limit (tries count) keep it from hammering`);
    assert.deepEqual([...new Set(tries.map((x) => x.id))], [got!.id], "the same notice id on every try");
    await sleep(12_000);
    assert.equal(about(sheep.agentId).length, 1, "taken once");
    await scene.ok({ action: "close", agentId: sheep.agentId });
    await scene.shepherd.stop();
  });

  it("a notice pending when its shepherd was killed is sent by the next shepherd, once", async () => {
    const outbox = join(world!.agentDir, "pi-shepherd", "notify", "outbox");
    const entries = () => readdirSync(outbox).filter((f) => f.endsWith(".json"));
    const first = world!.scene();
    const sheep = await first.start("left");
    const before = entries().length;
    await first.ok({ action: "prompt", agentId: sheep.agentId, message: ask("Shall I shear them?", "Q2") });
    // Written to the outbox, then killed before the notice's 10 s window ended: nothing was sent.
    await until("the outbox entry", () => (entries().length > before ? true : undefined), 60_000);
    first.shepherd.proc.kill("SIGKILL");
    try {
      await first.shepherd.proc;
    } catch {
      // killed, as meant
    }
    assert.equal(about(sheep.agentId).length, 0, "the killed shepherd sent nothing");

    const second = world!.shepherd();
    await second.command({ type: "get_state" });
    // The killed shepherd's sender lock goes stale (10 s) before the next one may send.
    const [got] = await until("the next shepherd's POST", () => (about(sheep.agentId).length > 0 ? about(sheep.agentId) : undefined), 90_000);
    assert.deepEqual([got!.event, got!.label], ["question", "left"]);
    assert.match(got!.text, /Shall I shear them\?/);
    // The next shepherd re-attached the sheep and read its question again: the outbox knew it.
    await sleep(15_000);
    assert.equal(about(sheep.agentId).length, 1, "sent once across the crash");
    await second.ok({ action: "close", agentId: sheep.agentId });
  });
});
