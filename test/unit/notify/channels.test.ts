/**
 * The channels against real receivers: a local HTTP server for the webhook (JSON and Slack bodies)
 * and ntfy, a script standing in for notify-send (an argv, never a shell line), and the terminal
 * and browser sinks. A webhook's body holds the fixed fields only: no token, no secret.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sendDesktop } from "../../../src/notify/channels/desktop.ts";
import { makeChannels } from "../../../src/notify/channels/make.ts";
import { buildNotice } from "../../../src/notify/notice.ts";

const notice = buildNotice(
  "n_1",
  [
    {
      kind: "question",
      key: "question:m_1",
      agentId: "a_1",
      label: "-rf scout",
      host: "local",
      text: "Which branch?",
      at: Date.parse("2026-01-01T00:00:00Z"),
      messageId: "m_1",
    },
  ],
  { link: "http://127.0.0.1:4000/" },
);

describe("the channels", () => {
  let server: Server;
  let base: string;
  const got: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  let status = 200;
  before(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        got.push({ url: req.url ?? "", headers: req.headers, body });
        res.writeHead(status).end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it("webhook: one JSON POST with exactly the fixed fields", async () => {
    got.length = 0;
    const [ch] = makeChannels([{ type: "webhook", url: `${base}/hook` }], {});
    await ch!.send(notice);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.headers["content-type"], "application/json");
    const body = JSON.parse(got[0]!.body);
    assert.deepEqual(Object.keys(body).sort(), ["agentId", "at", "event", "host", "id", "label", "link", "text"]);
    assert.deepEqual(
      { event: body.event, id: body.id, agentId: body.agentId, label: body.label, host: body.host, at: body.at, link: body.link },
      { event: "question", id: "n_1", agentId: "a_1", label: "-rf scout", host: "local", at: "2026-01-01T00:00:00.000Z", link: "http://127.0.0.1:4000/" },
    );
    assert.match(body.text, /\/shepherd reply a_1 m_1/);
    assert.doesNotMatch(got[0]!.body, /token/i);
  });

  it("webhook with format slack: a {text} body", async () => {
    got.length = 0;
    const [ch] = makeChannels([{ type: "webhook", url: `${base}/slack`, format: "slack" }], {});
    await ch!.send(notice);
    const body = JSON.parse(got[0]!.body);
    assert.deepEqual(Object.keys(body), ["text"]);
    assert.match(body.text, /asks a question/);
  });

  it("ntfy: the text as the body, title and priority in headers", async () => {
    got.length = 0;
    const [ch] = makeChannels([{ type: "ntfy", url: `${base}/herd` }], {});
    await ch!.send(notice);
    assert.equal(got[0]!.url, "/herd");
    assert.match(String(got[0]!.headers.title), /^pi-shepherd: -rf scout \(a_1\) on local asks a question$/);
    assert.equal(got[0]!.headers.priority, "high");
    assert.match(got[0]!.body, /Which branch\?/);
  });

  it("a receiver that answers an error is a failure (tried again later)", async () => {
    status = 503;
    try {
      const [ch] = makeChannels([{ type: "webhook", url: `${base}/hook` }], {});
      await assert.rejects(ch!.send(notice), /answered HTTP 503/);
    } finally {
      status = 200;
    }
  });

  it("desktop: notify-send with an argv, title and body after --", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-shepherd-notify-send-"));
    try {
      const script = join(dir, "notify-send");
      const out = join(dir, "argv");
      writeFileSync(script, `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done > '${out}'\n`);
      chmodSync(script, 0o755);
      await sendDesktop({ ...notice, title: "$(touch pwned) -rf" }, process.env, script);
      const argv = readFileSync(out, "utf8").split("\0").slice(0, -1);
      assert.deepEqual(argv.slice(0, 3), ["--app-name=pi-shepherd", "--urgency=critical", "--"]);
      assert.equal(argv[3], "$(touch pwned) -rf");
      assert.equal(argv[4], notice.text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("terminal and browser go through the session's sinks, and fail while there is none", async () => {
    const shown: string[] = [];
    const [term, browser] = makeChannels([{ type: "terminal" }, { type: "browser" }], {});
    await assert.rejects(term!.send(notice), /no screen/);
    await assert.rejects(browser!.send(notice), /panel does not run/);
    const [term2, browser2] = makeChannels([{ type: "terminal" }, { type: "browser" }], {
      terminal: (n) => shown.push(n.title),
      browser: (n) => shown.push(`page:${n.id}`) > 0,
    });
    await term2!.send(notice);
    await browser2!.send(notice);
    assert.deepEqual(shown, [notice.title, "page:n_1"]);
  });
});
