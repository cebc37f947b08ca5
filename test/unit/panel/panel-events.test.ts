/**
 * The panel's event stream on real sockets over a real shepherd core: what the core sees becomes
 * an event with an id (a record changed, a result, a message, blocked, exited, closed) without
 * any poll of the HTTP side; a reconnect with Last-Event-ID gets what it missed, or a reset when
 * that is no longer held; 100 clients are held and let go, the 101st refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_EVENT_TEXT } from "../../../src/panel/feed.ts";
import { MAX_CLIENTS, MAX_EVENT_BYTES, MAX_RING_BYTES, MAX_UNSENT_BYTES, RING_SIZE } from "../../../src/panel/sse.ts";
import { ask, openEvents, type PanelWorld, panelWorld, type SseClient } from "../../support/panel-world.ts";
import { parseAgentId, parsePromptId } from "../../../src/domain/ids.ts";

const JSON_TYPE = { "content-type": "application/json" };
const data = (e: { data: string }) => JSON.parse(e.data) as Record<string, unknown>;

describe("panel events", () => {
  let w: PanelWorld;
  before(async () => {
    w = await panelWorld();
  });
  after(() => w.close());

  const post = (path: string, body: object) => ask(w.port, { method: "POST", path, headers: w.authed(JSON_TYPE), body });

  it("a start, a prompt, a message, a question, a result, an exit and a close each reach the stream with growing ids", async () => {
    const s = await openEvents(w.port, w.authed());
    assert.equal(s.status, 200);
    const { agentId } = (await post("/api/v1/start", { agent: "scout", label: "ev-1" })).json() as { agentId: string };
    const first = await s.next((e) => e.event === "sheep" && data(e).agentId === agentId);
    assert.equal(data(first).label, "ev-1");
    const { promptId } = (await post(`/api/v1/sheep/${agentId}/prompt`, { message: "<img src=x onerror=alert(1)> go\nmore" })).json() as { promptId: string };
    const working = await s.next((e) => e.event === "sheep" && data(e).state === "working");
    assert.equal(data(working).working, "<img src=x onerror=alert(1)> go", "a sheep's text is data, sent as it is");
    w.world.say(agentId, { messageId: "m_bbbbbbbbbb", kind: "progress", text: "half way" });
    const msg = await s.next((e) => e.event === "message");
    assert.deepEqual(data(msg), {
      agentId,
      message: { messageId: "m_bbbbbbbbbb", kind: "progress", text: "half way", at: (data(msg).message as { at: string }).at },
    });
    await s.next((e) => e.event === "sheep" && data(e).unread === 1);
    w.world.say(agentId, { messageId: "m_cccccccccc", kind: "question", text: "which one?", awaitReply: true, timeoutSec: 60 });
    const blocked = await s.next((e) => e.event === "blocked");
    assert.deepEqual(data(blocked), { agentId, label: "ev-1" });
    await s.next((e) => e.event === "sheep" && data(e).questions === 1);
    w.world.stopAsking(agentId);
    w.world.mem(agentId).outbox.set(promptId, {
      promptId,
      status: "completed",
      text: "<script>alert(1)</script> done",
      usage: { input: 100, output: 20, cost: 0.5 },
      startedAt: new Date(Date.now() - 2000).toISOString(),
      finishedAt: new Date().toISOString(),
    });
    w.world.ring(agentId);
    const result = await s.next((e) => e.event === "result");
    assert.deepEqual(data(result), { agentId, promptId, status: "completed", text: "<script>alert(1)</script> done" });
    const idle = await s.next((e) => e.event === "sheep" && data(e).state === "idle" && (data(e).usage as { input: number }).input === 100);
    assert.deepEqual(data(idle).usage, { input: 100, output: 20, cost: 0.5 });
    w.world.exitPi(agentId, { code: 1, signal: null });
    // The exit is known from the multiplexer once something asks (here a status, as the widget's or a wait's would).
    await w.shepherd.status(parseAgentId(agentId));
    const exited = await s.next((e) => e.event === "exited");
    assert.deepEqual(data(exited), { agentId });
    await post(`/api/v1/sheep/${agentId}/close`, {});
    const closed = await s.next((e) => e.event === "closed");
    assert.deepEqual(data(closed), { agentId });
    const ids = s.events.map((e) => Number(e.id));
    assert.ok(
      ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1]!)),
      `ids grow: ${ids}`,
    );
    s.close();
    await s.closed;
  });

  it("a reconnect with Last-Event-ID gets exactly what it missed, in order; an id no longer held gets reset", async () => {
    const a = await openEvents(w.port, w.authed());
    const { agentId } = (await post("/api/v1/start", { agent: "scout", label: "ev-2" })).json() as { agentId: string };
    const seen = await a.next((e) => e.event === "sheep" && data(e).agentId === agentId);
    a.close();
    await a.closed;
    // Missed while away: a prompt (working) and its result (idle again).
    const { promptId } = (await post(`/api/v1/sheep/${agentId}/prompt`, { message: "while away" })).json() as { promptId: string };
    w.world.answer(agentId, promptId, "answered while away");
    await w.shepherd.wait([parsePromptId(promptId)], { timeoutSec: 5 });
    const b = await openEvents(w.port, w.authed({ "last-event-id": seen.id! }));
    const got = await b.next((e) => e.event === "result" && data(e).promptId === promptId);
    const missed = b.events.slice(0, b.events.indexOf(got) + 1);
    assert.ok(missed.length >= 2, JSON.stringify(missed));
    assert.ok(
      missed.every((e) => Number(e.id) > Number(seen.id)),
      "nothing it had seen",
    );
    assert.ok(missed.some((e) => e.event === "sheep" && data(e).state === "working"));
    b.close();
    const none = await openEvents(w.port, w.authed({ "last-event-id": String(Number(seen.id) - RING_SIZE * 10) }));
    const reset = await none.next((e) => e.event === "reset");
    assert.equal(reset.data, "{}");
    none.close();
    const future = await openEvents(w.port, w.authed({ "last-event-id": "1" }));
    await future.next((e) => e.event === "reset");
    future.close();
  });

  it("a reconnect that missed more than a client may leave unsent gets one reset, and stays connected", async () => {
    const a = await openEvents(w.port, w.authed());
    const mark = w.server.hub.send("blocked", { agentId: "a_0000000000", label: "mark" });
    await a.next((e) => e.id === String(mark));
    a.close();
    await a.closed;
    // Missed while away: more than MAX_UNSENT_BYTES of held events (each well under a result's 16 KiB).
    const text = "z".repeat(8 * 1024);
    for (let i = 0; i * text.length <= MAX_UNSENT_BYTES; i++) w.server.hub.send("result", { agentId: "a_0000000000", promptId: `p_${i}`, text });
    const b = await openEvents(w.port, w.authed({ "last-event-id": String(mark) }));
    const first = await b.next(() => true);
    assert.equal(first.event, "reset", "one reset instead of a replay that would drop it");
    const after = w.server.hub.send("blocked", { agentId: "a_0000000000", label: "after" });
    await b.next((e) => e.id === String(after));
    assert.equal(b.events.filter((e) => e.event === "result").length, 0, "nothing of the replay was sent");
    b.close();
    await b.closed;
  });

  it("a result's text over 16 KiB is cut in its event and says so; the whole stays the conversation's", async () => {
    const s = await openEvents(w.port, w.authed());
    const { agentId } = (await post("/api/v1/start", { agent: "scout", label: "ev-big" })).json() as { agentId: string };
    const { promptId } = (await post(`/api/v1/sheep/${agentId}/prompt`, { message: "say a lot" })).json() as { promptId: string };
    w.world.answer(agentId, promptId, "y".repeat(MAX_EVENT_TEXT + 5000));
    const e = data(await s.next((x) => x.event === "result" && data(x).promptId === promptId));
    assert.equal((e.text as string).length, MAX_EVENT_TEXT);
    assert.equal(e.truncated, true);
    const settled = w.shepherd.registry.prompts.get(promptId)?.settled;
    assert.equal(settled?.text?.length, MAX_EVENT_TEXT + 5000, "the record keeps it whole");
    s.close();
    await post(`/api/v1/sheep/${agentId}/close`, {});
  });

  it("an event over 128 KiB goes out as a reset, and the ring holds at most 256 KiB of events (issue 31)", async () => {
    const s = await openEvents(w.port, w.authed());
    const big = w.server.hub.send("message", { agentId: "a_0000000000", message: { at: "2".repeat(3.5 * 1024 * 1024) } });
    const got = await s.next((e) => e.id === String(big));
    assert.equal(got.event, "reset", "sent as a reset: the client fetches again");
    assert.equal(got.data, "{}");
    const after = w.server.hub.send("blocked", { agentId: "a_0000000000", label: "still here" });
    await s.next((e) => e.id === String(after));
    for (let i = 0; i < 64; i++) w.server.hub.send("result", { agentId: "a_0000000000", promptId: `p_${i}`, text: "r".repeat(12 * 1024) });
    const held = w.server.hub.held;
    assert.ok(held.bytes <= MAX_RING_BYTES && held.events < 64, JSON.stringify(held));
    assert.ok(held.bytes > MAX_RING_BYTES - MAX_EVENT_BYTES, "the newest events are held up to the bound");
    s.close();
    await s.closed;
  });

  it(`${MAX_CLIENTS} clients are held at once and each gets the same event; the next is refused 503; closed ones are let go`, async () => {
    const clients: SseClient[] = [];
    for (let i = 0; i < MAX_CLIENTS; i++) clients.push(await openEvents(w.port, w.authed()));
    assert.ok(clients.every((c) => c.status === 200));
    assert.equal(w.server.hub.size, MAX_CLIENTS);
    const over = await ask(w.port, { path: "/api/v1/events", headers: w.authed() });
    assert.equal(over.status, 503, over.text);
    assert.equal((over.json() as { code: string }).code, "too_many_clients");
    const { agentId } = (await post("/api/v1/start", { agent: "scout", label: "ev-3" })).json() as { agentId: string };
    const got = await Promise.all(clients.map((c) => c.next((e) => e.event === "sheep" && data(e).agentId === agentId)));
    assert.equal(new Set(got.map((e) => e.id)).size, 1, "one event, one id, to all");
    const metrics = await ask(w.port, { path: "/metrics", headers: w.authed() });
    assert.match(metrics.text, new RegExp(`^pi_shepherd_panel_clients ${MAX_CLIENTS}$`, "m"));
    for (const c of clients) c.close();
    await Promise.all(clients.map((c) => c.closed));
    for (let i = 0; i < 100 && w.server.hub.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(w.server.hub.size, 0, "every closed client is let go");
    const again = await openEvents(w.port, w.authed());
    assert.equal(again.status, 200);
    again.close();
  });

  it("a session (its cookie and key) opens the stream as the token does, the cookie alone does not; stopping the panel ends every stream", async () => {
    const s = await w.session();
    const alone = await openEvents(w.port, { cookie: s.cookie, origin: `http://127.0.0.1:${w.port}` });
    assert.equal(alone.status, 401, "the cookie alone, as another port's server would have it");
    alone.close();
    const c = await openEvents(w.port, s.headers);
    assert.equal(c.status, 200);
    await w.server.stop();
    await c.closed;
    assert.equal(w.server.hub.size, 0);
  });
});

describe("the core's record signal the feed stands on", () => {
  it("Shepherd.onRecords is told after each write of the records, a listener's throw changes nothing, and it stops when asked", async () => {
    const w = await panelWorld();
    try {
      let told = 0;
      const stop = w.shepherd.onRecords(() => {
        told++;
        throw new Error("a view's fault");
      });
      const s = await w.start("sig-1");
      assert.ok(told > 0, "a start writes the records");
      const before = told;
      const p = await w.shepherd.prompt(s.agentId, "x");
      assert.ok(told > before, "a prompt writes them");
      assert.equal(w.shepherd.registry.prompts.get(p.promptId)?.firstLine, "x", "the prompt went on all the same");
      stop();
      const after = told;
      await w.shepherd.close(s.agentId);
      assert.equal(told, after, "not told once stopped");
    } finally {
      await w.close();
    }
  });
});
