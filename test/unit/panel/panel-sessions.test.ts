/**
 * The panel's sessions and connections on real sockets: every cookie of the panel's name is
 * looked at (a page on another port of 127.0.0.1 can toss in one of the same name), a session and
 * the token are let go after their idle time (a fake clock), and a local process can neither hold
 * more than MAX_CONNECTIONS nor keep one that sends no headers.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { PanelAuth, SESSION_IDLE_MS, TOKEN_IDLE_MS } from "../../../src/panel/auth.ts";
import { HEADERS_TIMEOUT_MS, MAX_CONNECTIONS } from "../../../src/panel/server.ts";
import { PING_MS } from "../../../src/panel/sse.ts";
import { ask, openEvents, type PanelWorld, panelWorld } from "../../support/panel-world.ts";

describe("panel sessions: tossed cookies and idle time", () => {
  let w: PanelWorld;
  let t = Date.parse("2026-01-01T00:00:00Z");
  const auth = new PanelAuth(undefined, () => t);
  before(async () => {
    w = await panelWorld({ auth });
  });
  after(() => w.close());

  const sheep = (headers: Record<string, string>) => ask(w.port, { path: "/api/v1/sheep", headers });

  it("a cookie of the panel's name tossed in before the real one (a longer path, set from another port) locks nobody out", async () => {
    const s = await w.session();
    const name = s.cookie.slice(0, s.cookie.indexOf("="));
    // What a browser sends after a page on 127.0.0.1:<other> set `<name>=tossed; path=/api`: the longer path first.
    const tossed = `${name}=tossed; ${s.cookie}`;
    assert.equal((await sheep({ ...s.headers, cookie: tossed })).status, 200);
    // Many tossed ones before it, still only its own session opens.
    const many = `${Array.from({ length: 10 }, (_, i) => `${name}=t${i}`).join("; ")}; ${s.cookie}`;
    assert.equal((await sheep({ ...s.headers, cookie: many })).status, 200);
    assert.equal((await sheep({ ...s.headers, cookie: `${name}=tossed; ${name}=other` })).status, 401, "no cookie of its own: nothing opens");
  });

  it(`a session unused for ${SESSION_IDLE_MS / 3_600_000} h is let go; one in use stays`, async () => {
    const used = await w.session();
    const idle = await w.session();
    t += SESSION_IDLE_MS / 2;
    assert.equal((await sheep(used.headers)).status, 200);
    t += SESSION_IDLE_MS / 2;
    assert.equal((await sheep(used.headers)).status, 200, "used half-way: not idle yet");
    const gone = await sheep(idle.headers);
    assert.equal(gone.status, 401, "idle for the whole time: let go");
    assert.match(gone.text, /a session ends after 12 hours unused.*\/shepherd panel url/);
    t += SESSION_IDLE_MS;
    assert.equal((await sheep(used.headers)).status, 401);
  });

  it(`the token unused for ${TOKEN_IDLE_MS / 3_600_000} h opens nothing; the next URL has a new one, which does`, async () => {
    const old = w.server.url;
    const token = new URL(old).hash.replace(/^#token=/, "");
    assert.equal((await sheep({ authorization: `Bearer ${token}` })).status, 200);
    t += TOKEN_IDLE_MS;
    assert.equal((await sheep({ authorization: `Bearer ${token}` })).status, 401);
    const fresh = w.server.url;
    assert.notEqual(fresh, old);
    assert.equal((await sheep({ authorization: `Bearer ${new URL(fresh).hash.replace(/^#token=/, "")}` })).status, 200);
    assert.equal((await sheep({ authorization: `Bearer ${token}` })).status, 401, "the old token stays let go");
  });

  it("an event stream whose session is let go meanwhile is ended at its next ping", { timeout: PING_MS + 10_000 }, async () => {
    const s = await w.session();
    const stream = await openEvents(w.port, s.headers);
    assert.equal(stream.status, 200);
    t += SESSION_IDLE_MS;
    const ended = await Promise.race([stream.closed.then(() => "ended"), new Promise<string>((r) => setTimeout(() => r("still open"), PING_MS + 5000))]);
    stream.close();
    assert.equal(ended, "ended");
  });

  it("an event stream does not open on a session let go", async () => {
    const s = await w.session();
    t += SESSION_IDLE_MS;
    const stream = await openEvents(w.port, s.headers);
    assert.equal(stream.status, 401);
    stream.close();
  });
});

describe("panel connections: a cap, and no connection without headers kept", () => {
  let w: PanelWorld;
  const sockets: Socket[] = [];
  before(async () => {
    w = await panelWorld();
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await w.close();
  });

  function open(): Promise<{ socket: Socket; closed: Promise<string> }> {
    return new Promise((resolve, reject) => {
      const socket = connect(w.port, "127.0.0.1");
      sockets.push(socket);
      let got = "";
      socket.on("data", (d) => {
        got += String(d);
      });
      const closed = new Promise<string>((r) => socket.on("close", () => r(got)));
      socket.once("connect", () => resolve({ socket, closed }));
      socket.once("error", reject);
    }).then((x) => {
      (x as { socket: Socket }).socket.on("error", () => undefined);
      return x as { socket: Socket; closed: Promise<string> };
    });
  }

  const connections = () =>
    new Promise<number>((resolve, reject) =>
      (w.server as unknown as { server: { getConnections(cb: (e: Error | null, n: number) => void): void } }).server.getConnections((e, n) =>
        e ? reject(e) : resolve(n),
      ),
    );

  it(`a local process opening ${MAX_CONNECTIONS + 72} idle connections holds at most ${MAX_CONNECTIONS}: the rest are closed at once`, async () => {
    const opened = await Promise.all(Array.from({ length: MAX_CONNECTIONS + 72 }, () => open()));
    let closed = 0;
    for (const o of opened) void o.closed.then(() => closed++);
    const deadline = Date.now() + 10_000;
    while (closed < 72 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(closed >= 72, `${closed} closed`);
    assert.ok((await connections()) <= MAX_CONNECTIONS, `${await connections()} held`);
    for (const o of opened) o.socket.destroy();
    while ((await connections()) > 0) await new Promise((r) => setTimeout(r, 20));
  });

  it(`a connection that sends no headers is closed with 408 within ${HEADERS_TIMEOUT_MS / 1000} s and the check's second, not 30 s`, async () => {
    const { closed } = await open();
    const got = await Promise.race([closed, new Promise<string>((r) => setTimeout(() => r("still open"), HEADERS_TIMEOUT_MS + 5000))]);
    assert.match(got, /^HTTP\/1\.1 408/);
  });
});
