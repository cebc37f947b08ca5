/**
 * The panel's auth kept across a restart (src/panel/auth-file.ts): a new server on the same port
 * with the file's auth takes the old token and the old page's session; a session idle past its
 * time is not taken back; the file is 0600 in a 0700 directory, holds the token and digests only,
 * and the token is in no other file; a file that is not private or not the panel's shape is refused.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AUTH_SAVE_EVERY_MS, AuthFile } from "../../../src/panel/auth-file.ts";
import { SESSION_IDLE_MS } from "../../../src/panel/auth.ts";
import { panelDir } from "../../../src/panel/private-files.ts";
import { PanelServer } from "../../../src/panel/server.ts";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Every file under dir, recursively, with its text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push({ path: p, text: readFileSync(p, "latin1") });
  }
  return out;
}

describe("panel auth file: the same URL and sessions after a restart", () => {
  let w: PanelWorld;
  let agentDir: string;
  before(async () => {
    w = await panelWorld();
    agentDir = join(w.root, "agent");
  });
  after(() => w.close());

  it("a new server on the same port with the file's auth takes the old token and the old page's session", async () => {
    const port = await freePort();
    const file = AuthFile.of(agentDir);
    const first = file.load(port);
    assert.equal(first.restored, false);
    const a = new PanelServer({ entry: w.entry, port, auth: first.auth });
    await a.start();
    file.keep(a.auth, port);
    const token = a.auth.token;
    const s = await ask(port, {
      method: "POST",
      path: "/api/v1/session",
      headers: { authorization: `Bearer ${token}`, origin: `http://127.0.0.1:${port}`, "content-type": "application/json" },
      body: {},
    });
    assert.equal(s.status, 200, s.text);
    const key = (s.json() as { session: string }).session;
    const cookie = String(s.headers["set-cookie"]).split(";")[0]!;
    const page = { cookie, "x-pi-shepherd-session": key };
    assert.equal((await ask(port, { path: "/api/v1/sheep", headers: page })).status, 200);
    await a.stop();
    file.release();

    const path = join(panelDir(agentDir), "auth.json");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(panelDir(agentDir)).mode & 0o777, 0o700);
    const text = readFileSync(path, "utf8");
    assert.ok(!text.includes(key) && !text.includes(cookie.slice(cookie.indexOf("=") + 1)), "the session's cookie and key are kept as digests only");
    // The token is in the panel's file and in no other file under the agent dir.
    const holding = filesUnder(agentDir)
      .filter((f) => f.text.includes(token))
      .map((f) => f.path);
    assert.deepEqual(holding, [path]);

    const again = AuthFile.of(agentDir).load(port);
    assert.equal(again.restored, true);
    const b = new PanelServer({ entry: w.entry, port, auth: again.auth });
    await b.start();
    try {
      assert.equal((await ask(port, { path: "/api/v1/sheep", headers: page })).status, 200, "the old page's session opens the restarted panel");
      assert.equal((await ask(port, { path: "/api/v1/sheep", headers: { authorization: `Bearer ${token}` } })).status, 200, "the old URL's token too");
      assert.equal(b.url, `http://127.0.0.1:${port}/#token=${token}`, "the same URL");
    } finally {
      await b.stop();
    }
    // Another port's panel does not take this port's auth.
    assert.equal(AuthFile.of(agentDir).load(port + 1).restored, false);
  });

  it(`a session idle for ${SESSION_IDLE_MS / 3_600_000} h is not taken back; one used since is, and a use is written at most every ${AUTH_SAVE_EVERY_MS / 1000} s`, () => {
    let t = Date.parse("2026-01-01T00:00:00Z");
    const dir = join(w.root, "idle");
    const file = new AuthFile(join(panelDir(dir), "auth.json"), () => t);
    const auth = file.load(7999).auth;
    file.keep(auth, 7999);
    const idle = auth.newSession();
    const used = auth.newSession();
    const req = (s: { cookie: string; key: string }) =>
      ({ headers: { cookie: `pi_shepherd_panel_7999=${s.cookie}`, "x-pi-shepherd-session": s.key } }) as never;
    t += SESSION_IDLE_MS - 1000;
    assert.equal(auth.credential(req(used), 7999), "cookie");
    // Within the interval, this use waits in memory; release writes it.
    const before = readFileSync(file.path, "utf8");
    t += 10;
    assert.equal(auth.credential(req(used), 7999), "cookie");
    assert.equal(readFileSync(file.path, "utf8"), before, "unchanged by a use within the interval");
    file.release();
    t += 2000;
    const back = new AuthFile(file.path, () => t).load(7999).auth;
    assert.equal(back.credential(req(idle), 7999), undefined, "idle past its time: gone");
    assert.equal(back.credential(req(used), 7999), "cookie", "used since: taken back");
  });

  it("a file that is not private, not a regular file, or not the panel's shape is refused: a fresh token, and why", () => {
    const dir = join(w.root, "hostile");
    const file = new AuthFile(join(panelDir(dir), "auth.json"));
    const auth = file.load(7998).auth;
    file.keep(auth, 7998);
    file.release();
    chmodSync(file.path, 0o644);
    const r = file.load(7998);
    assert.equal(r.restored, false);
    assert.notEqual(r.auth.token, auth.token);
    assert.match(r.problem ?? "", /mode 644/);
    chmodSync(file.path, 0o600);
    assert.equal(file.load(7998).restored, true, "the same file, private again: taken");
    writeFileSync(file.path, JSON.stringify({ v: 1, port: 7998, token: "short", tokenUsed: 0, sessions: [] }), { mode: 0o600 });
    assert.match(file.load(7998).problem ?? "", /not the panel's auth file/);
    const elsewhere = join(dir, "elsewhere.json");
    writeFileSync(elsewhere, "{}", { mode: 0o600 });
    const linked = new AuthFile(join(dir, "linked", "auth.json"));
    mkdirSync(join(dir, "linked"), { mode: 0o700 });
    symlinkSync(elsewhere, linked.path);
    assert.match(linked.load(7998).problem ?? "", /not a regular file/);
    chmodSync(panelDir(dir), 0o755);
    assert.match(file.load(7998).problem ?? "", /mode 755/);
  });
});
