/**
 * Another shepherd's sheep's terminal carried through this panel (src/panel/shepherds-route.ts),
 * against a sibling that is a plain HTTP server registered like a shepherd: the stream's bytes pass
 * through as they come (not held until the end), with the pane's size and nothing else of the
 * sibling's headers; it ends when the sibling ends it, the sibling's request ends when the page
 * goes, a page that reads nothing is let go; the sibling's token goes to the sibling only; the
 * keys go to the sibling's own route as sent and its [code] refusal comes back as it answered it.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ShepherdRegistry } from "../../../src/panel/registry.ts";
import { PanelServer } from "../../../src/panel/server.ts";
import { MAX_TERMINAL_UNSENT } from "../../../src/panel/terminal.ts";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";

const SIBLING_TOKEN = "s".repeat(43);
const SHEEP = "a_0123456789";
const SLOW = "a_slowslow00";

describe("a sibling's terminal through this panel", () => {
  let w: PanelWorld;
  let sibling: Server;
  let own: PanelServer;
  /** The sibling's open terminal answers, newest last. */
  let streams: { req: IncomingMessage; res: ServerResponse; closed: boolean }[] = [];
  const seen: { method: string; url: string; auth: string; session: string; body: string }[] = [];

  before(async () => {
    w = await panelWorld();
    sibling = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        seen.push({
          method: req.method ?? "",
          url: req.url ?? "",
          auth: String(req.headers.authorization ?? ""),
          session: String(req.headers["x-pi-shepherd-session"] ?? ""),
          body,
        });
        if (req.headers.authorization !== `Bearer ${SIBLING_TOKEN}`) {
          res.writeHead(401, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: "unauthorized", message: "[unauthorized] no" }));
          return;
        }
        if (req.url === `/api/v1/sheep/${SHEEP}/terminal` && req.method === "POST") {
          res.writeHead(403, { "content-type": "application/json; charset=utf-8" });
          res.end(JSON.stringify({ code: "not_owned", message: `[not_owned] sheep ${SHEEP} is another session's; its own shepherd types into it.` }));
          return;
        }
        // A sibling slow to answer: its head comes after the page may have gone.
        if (req.url === `/api/v1/sheep/${SLOW}/terminal`) {
          const s = { req, res, closed: false };
          res.on("close", () => {
            s.closed = true;
          });
          setTimeout(() => {
            res.writeHead(200, { "content-type": "application/octet-stream" });
            res.write("late|");
            streams.push(s);
          }, 400);
          return;
        }
        if (req.url === `/api/v1/sheep/${SHEEP}/terminal`) {
          res.writeHead(200, {
            "content-type": "application/octet-stream",
            "x-terminal-cols": "100",
            "x-terminal-rows": "30",
            "x-sibling-secret": SIBLING_TOKEN,
          });
          res.write("SCREEN|");
          const s = { req, res, closed: false };
          res.on("close", () => {
            s.closed = true;
          });
          streams.push(s);
          return;
        }
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "not_found", message: "[not_found] no" }));
      });
    });
    await new Promise<void>((r) => sibling.listen(0, "127.0.0.1", r));
    const port = (sibling.address() as AddressInfo).port;
    const reg = new ShepherdRegistry(join(w.root, "reg", "panel", "shepherds"), () => true);
    reg.register({ pid: 7001, port, token: SIBLING_TOKEN, cwd: "/sibling", startedAt: "2026-01-01T00:00:00Z" });
    own = new PanelServer({ entry: w.entry, shepherds: { registry: reg, selfPid: process.pid, stablePort: 1 } });
    await own.start();
  });
  after(async () => {
    await own?.stop();
    sibling.closeAllConnections();
    sibling.close();
    await w.close();
  });

  const path = `/api/v1/shepherds/7001/api/v1/sheep/${SHEEP}/terminal`;
  const open = () =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: own.port, path, agent: false, headers: { host: `127.0.0.1:${own.port}`, authorization: `Bearer ${own.auth.token}` } },
        resolve,
      );
      req.on("error", reject);
      req.end();
    });
  const until = async (what: string, ok: () => boolean) => {
    for (let i = 0; i < 100 && !ok(); i++) await sleep(20);
    assert.ok(ok(), what);
  };

  it("passes the bytes on as they come, with the pane's size and nothing else of the sibling's; ends when the sibling ends", async () => {
    streams = [];
    const res = await open();
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "application/octet-stream");
    assert.deepEqual([res.headers["x-terminal-cols"], res.headers["x-terminal-rows"]], ["100", "30"]);
    assert.equal(res.headers["x-sibling-secret"], undefined, "the sibling's other headers stay there");
    assert.ok(!JSON.stringify(res.headers).includes(SIBLING_TOKEN));
    let got = "";
    res.on("data", (c: Buffer) => {
      got += c.toString();
    });
    const ended = new Promise<void>((r) => res.on("end", () => r()));
    await until("the screen came before anything else was written", () => got === "SCREEN|");
    streams[0]!.res.write("live bytes|");
    await until("a chunk comes while the stream is open (not held until its end)", () => got === "SCREEN|live bytes|");
    streams[0]!.res.end("last");
    await Promise.race([ended, sleep(5000).then(() => assert.fail("the page's stream did not end with the sibling's"))]);
    assert.equal(got, "SCREEN|live bytes|last");
    assert.ok(!got.includes(SIBLING_TOKEN) && !got.includes(own.auth.token));
    const asked = seen.filter((s) => s.url.endsWith("/terminal"));
    assert.equal(asked.at(-1)!.auth, `Bearer ${SIBLING_TOKEN}`, "the sibling is asked with its own token");
    assert.ok(!seen.some((s) => s.auth.includes(own.auth.token)), "this panel's token never goes to the sibling");
    assert.equal(own.siblingTerminals.open, 0);
  });

  it("the sibling's request ends when the page goes", async () => {
    streams = [];
    const res = await open();
    res.resume();
    await until("the sibling streams", () => streams.length === 1);
    assert.equal(own.siblingTerminals.open, 1);
    res.destroy();
    await until("the sibling's answer is closed", () => streams[0]!.closed);
    await until("no stream is counted", () => own.siblingTerminals.open === 0);
  });

  it("a page gone before the sibling's answer came: the sibling's answer is closed when it comes, and no stream is counted", async () => {
    streams = [];
    const req = request({
      host: "127.0.0.1",
      port: own.port,
      path: `/api/v1/shepherds/7001/api/v1/sheep/${SLOW}/terminal`,
      agent: false,
      headers: { host: `127.0.0.1:${own.port}`, authorization: `Bearer ${own.auth.token}` },
    });
    req.on("error", () => {});
    req.end();
    await sleep(100);
    assert.equal(own.siblingTerminals.open, 1, "its place is held while the sibling's head is awaited");
    req.destroy();
    await until("the sibling answered", () => streams.length === 1);
    await until("the sibling's answer is closed", () => streams[0]!.closed);
    await until("no stream is counted", () => own.siblingTerminals.open === 0);
  });

  it("a page that reads nothing is let go once MAX_TERMINAL_UNSENT waits for it", async () => {
    streams = [];
    const res = await open();
    res.pause();
    await until("the sibling streams", () => streams.length === 1);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let pushed = 0;
    // The sockets' buffers (page and sibling) take their share first; past them, the bound ends it.
    while (!streams[0]!.closed && pushed < 64 * 1024 * 1024) {
      if (streams[0]!.res.write(chunk) === false) await sleep(2);
      pushed += chunk.length;
      await sleep(1);
    }
    assert.ok(streams[0]!.closed, `let go after ${pushed} bytes`);
    assert.ok(pushed > MAX_TERMINAL_UNSENT);
    res.destroy();
    await until("no stream is counted", () => own.siblingTerminals.open === 0);
  });

  it("keys go to the sibling's own route as sent, and its [code] refusal comes back as it answered", async () => {
    const typed = await ask(own.port, {
      method: "POST",
      path,
      headers: { authorization: `Bearer ${own.auth.token}`, "content-type": "application/json" },
      body: { keys: "ls\r" },
    });
    assert.equal(typed.status, 403, typed.text);
    assert.equal((typed.json() as { code: string }).code, "not_owned");
    assert.match((typed.json() as { message: string }).message, /^\[not_owned\] sheep a_0123456789 is another session's/);
    assert.ok(!typed.text.includes(SIBLING_TOKEN));
    const sent = seen.filter((s) => s.method === "POST").at(-1)!;
    assert.deepEqual(JSON.parse(sent.body), { keys: "ls\r" });
    assert.equal(sent.auth, `Bearer ${SIBLING_TOKEN}`);
  });
});
