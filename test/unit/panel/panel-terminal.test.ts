/**
 * The terminal's HTTP side: the keys a POST may carry (bounded, well-formed, nothing else), the
 * stream's first bytes (the screen, the cursor put back) and its bounds (a page that reads nothing
 * is let go, so no byte waits on it for ever; at most MAX_TERMINAL_STREAMS at once), the watch
 * closed with the page; and on a real panel, the routes' auth, methods and a runtime that cannot
 * stream saying so.
 */
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Shepherd } from "../../../src/core/shepherd.ts";
import { MAX_TERMINAL_KEYS } from "../../../src/domain/bounds.ts";
import { ShepherdError } from "../../../src/domain/errors.ts";
import type { AgentId } from "../../../src/domain/ids.ts";
import { sendError } from "../../../src/panel/errors.ts";
import { keysOf, MAX_TERMINAL_STREAMS, MAX_TERMINAL_UNSENT, screenBytes, TerminalStreams } from "../../../src/panel/terminal.ts";
import type { PaneSink } from "../../../src/ports/runtime.ts";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";

const code = (c: string) => (e: unknown) => e instanceof ShepherdError && e.code === c;
const ID = "a_0123456789" as AgentId;

describe("the keys of POST …/terminal", () => {
  it("takes a string of up to MAX_TERMINAL_KEYS characters (not UTF-16 units), and nothing else", () => {
    assert.equal(keysOf({ keys: "ls\r" }), "ls\r");
    assert.equal(keysOf({ keys: "😀".repeat(MAX_TERMINAL_KEYS) }).length, 2 * MAX_TERMINAL_KEYS);
    assert.throws(() => keysOf({ keys: "x".repeat(MAX_TERMINAL_KEYS + 1) }), code("invalid_params"));
    assert.throws(() => keysOf({ keys: "" }), code("invalid_params"));
    assert.throws(() => keysOf({ keys: 65 }), code("invalid_params"));
    assert.throws(() => keysOf({ keys: "a\udc00" }), code("invalid_params"));
    assert.throws(() => keysOf({ keys: "a", pane: "%1" }), code("invalid_params"));
  });

  it("the stream begins with the screen: cleared, its rows, the cursor where the pane has it", () => {
    const b = screenBytes({ text: "one\r\ntwo", cols: 10, rows: 2, cursorX: 3, cursorY: 1 }).toString();
    assert.equal(b, "\x1b[0m\x1b[H\x1b[2Jone\r\ntwo\x1b[0m\x1b[2;4H");
  });
});

describe("the terminal stream's bounds", () => {
  let server: Server;
  let port: number;
  const streams = new TerminalStreams();
  let sinks: PaneSink[] = [];
  let closed = 0;
  const shepherd = {
    terminal: {
      watch: async (_id: AgentId, sink: PaneSink) => {
        sinks.push(sink);
        return { screen: { text: "hello", cols: 80, rows: 24, cursorX: 5, cursorY: 0 }, close: () => void closed++ };
      },
    },
  } as unknown as Shepherd;

  before(async () => {
    server = createServer((req, res) => {
      streams.stream(shepherd, ID, req, res, () => true, false).catch((e) => sendError(res, e));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const open = () =>
    new Promise<{ status: number; headers: Record<string, unknown>; res: import("node:http").IncomingMessage }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, res }));
      req.on("error", reject);
      req.end();
    });

  it("sends the pane's size, the screen, then the output; the watch ends with the page", async () => {
    sinks = [];
    closed = 0;
    const { status, headers, res } = await open();
    assert.equal(status, 200);
    assert.equal(headers["content-type"], "application/octet-stream");
    assert.deepEqual([headers["x-terminal-cols"], headers["x-terminal-rows"]], ["80", "24"]);
    let got = "";
    res.on("data", (c: Buffer) => {
      got += c.toString();
    });
    await sleep(50);
    sinks[0]!.output(Buffer.from("live bytes"));
    for (let i = 0; i < 50 && !got.includes("live bytes"); i++) await sleep(20);
    assert.equal(got, `${screenBytes({ text: "hello", cols: 80, rows: 24, cursorX: 5, cursorY: 0 }).toString()}live bytes`);
    assert.equal(streams.size, 1);
    res.destroy();
    for (let i = 0; i < 50 && closed === 0; i++) await sleep(20);
    assert.equal(closed, 1, "the watch is closed when the page goes");
    assert.equal(streams.size, 0);
  });

  it("a page that reads nothing is let go once MAX_TERMINAL_UNSENT waits for it", async () => {
    sinks = [];
    closed = 0;
    const { res } = await open();
    res.pause();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let pushed = 0;
    // The kernel's socket buffers take their share first; past them, the stream's own bound ends it.
    while (closed === 0 && pushed < 64 * 1024 * 1024) {
      sinks[0]!.output(chunk);
      pushed += chunk.length;
      await sleep(1);
    }
    assert.equal(closed, 1, `let go after ${pushed} bytes`);
    assert.ok(pushed > MAX_TERMINAL_UNSENT);
    res.destroy();
  });

  it("the watch ending (the sheep closed) ends the answer", async () => {
    sinks = [];
    closed = 0;
    const { res } = await open();
    const ended = new Promise<void>((r) => res.on("end", () => r()));
    res.resume();
    sinks[0]!.end("closed");
    await ended;
  });

  it(`at most ${MAX_TERMINAL_STREAMS} at once: the next is told 503 too_many_clients`, async () => {
    sinks = [];
    const held = await Promise.all(Array.from({ length: MAX_TERMINAL_STREAMS }, () => open()));
    const over = await open();
    assert.equal(over.status, 503);
    let body = "";
    for await (const c of over.res) body += String(c);
    assert.match(body, /too_many_clients/);
    for (const h of held) h.res.destroy();
    for (let i = 0; i < 50 && streams.size > 0; i++) await sleep(20);
    assert.equal(streams.size, 0);
  });
});

describe("the terminal's routes on a panel", () => {
  let w: PanelWorld;
  let id: string;

  before(async () => {
    w = await panelWorld();
    id = (await w.start("alpha")).agentId;
  });
  after(async () => {
    await w.close();
  });

  it("need the token, take GET and POST only, and a runtime that cannot stream says so", async () => {
    assert.equal((await ask(w.port, { path: `/api/v1/sheep/${id}/terminal` })).status, 401);
    const put = await ask(w.port, { method: "PUT", path: `/api/v1/sheep/${id}/terminal`, headers: w.authed() });
    assert.equal(put.status, 405);
    assert.equal(put.headers.allow, "GET, HEAD, POST");
    const get = await ask(w.port, { path: `/api/v1/sheep/${id}/terminal`, headers: w.authed() });
    assert.equal(get.status, 503);
    assert.equal((get.json() as { code: string }).code, "runtime_unavailable");
    assert.match((get.json() as { message: string }).message, /cannot stream/);
    const bad = await ask(w.port, {
      method: "POST",
      path: `/api/v1/sheep/${id}/terminal`,
      headers: w.authed({ "content-type": "application/json" }),
      body: { keys: "" },
    });
    assert.equal(bad.status, 400);
    const unknown = await ask(w.port, {
      method: "POST",
      path: "/api/v1/sheep/a_zzzzzzzzzz/terminal",
      headers: w.authed({ "content-type": "application/json" }),
      body: { keys: "x" },
    });
    assert.equal(unknown.status, 404);
  });
});
