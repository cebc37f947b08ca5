/**
 * The register of this user's shepherds (src/panel/registry.ts) and the routes that list and reach
 * them (src/panel/shepherds-route.ts): an entry is 0600 in a 0700 directory; a stale one (its pid
 * gone) is dropped and its file removed; a file not private, not regular, too large or of another
 * shape is refused; a panel lists its siblings without their tokens and answers a sibling's route
 * with that sibling's answer, bounded, and a sibling that does not answer is a 502; an action on a
 * sibling's sheep (prompt, reply, interrupt, close) is that shepherd's own route and takes effect
 * there, its refusals coming back as its [code] JSON (a terminal's keys and stream too), while a
 * stale or foreign entry and a token the sibling refuses are refused here.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PanelServer } from "../../../src/panel/server.ts";
import { ShepherdRegistry } from "../../../src/panel/registry.ts";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";

const TOKEN = "t".repeat(43);

describe("panel registry: this user's shepherds, listed and reached", () => {
  let w: PanelWorld;
  before(async () => {
    w = await panelWorld();
  });
  after(() => w.close());

  it("an entry is 0600 in a 0700 directory; one whose pid no longer runs is dropped and its file removed", () => {
    const alive = new Set([1001, 1002]);
    const reg = new ShepherdRegistry(join(w.root, "reg1", "panel", "shepherds"), (pid) => alive.has(pid));
    reg.register({ pid: 1001, port: 7301, token: TOKEN, cwd: "/a", startedAt: "2026-01-01T00:00:00Z" });
    reg.register({ pid: 1002, port: 40000, token: TOKEN, cwd: "/b", startedAt: "2026-01-01T00:01:00Z" });
    assert.equal(statSync(join(reg.dir, "1001.json")).mode & 0o777, 0o600);
    assert.equal(statSync(reg.dir).mode & 0o777, 0o700);
    assert.deepEqual(
      reg.list().map((e) => e.pid),
      [1001, 1002],
    );
    alive.delete(1001);
    assert.deepEqual(
      reg.list().map((e) => e.pid),
      [1002],
    );
    assert.equal(existsSync(join(reg.dir, "1001.json")), false, "the stale entry's file is removed");
  });

  it("a file not private, not regular, too large or not of the shape is refused", () => {
    const reg = new ShepherdRegistry(join(w.root, "reg2", "panel", "shepherds"), () => true);
    reg.register({ pid: 2001, port: 7301, token: TOKEN, cwd: "/a", startedAt: "2026-01-01T00:00:00Z" });
    const good = (pid: number) => JSON.stringify({ v: 1, pid, port: 7302, token: TOKEN, cwd: "/x", startedAt: "2026-01-01T00:00:00Z" });
    writeFileSync(join(reg.dir, "2002.json"), good(2002), { mode: 0o644 });
    chmodSync(join(reg.dir, "2002.json"), 0o644);
    writeFileSync(join(reg.dir, "2003.json"), good(9999), { mode: 0o600 }); // another pid than its name
    writeFileSync(join(reg.dir, "2004.json"), good(2004).replace(TOKEN, "short"), { mode: 0o600 });
    writeFileSync(join(reg.dir, "2005.json"), " ".repeat(9000) + good(2005), { mode: 0o600 });
    writeFileSync(join(w.root, "reg2", "elsewhere.json"), good(2006), { mode: 0o600 });
    symlinkSync(join(w.root, "reg2", "elsewhere.json"), join(reg.dir, "2006.json"));
    assert.deepEqual(
      reg.list().map((e) => e.pid),
      [2001],
    );
    assert.equal(readdirSync(reg.dir).length, 6, "refused files are left alone: they are not the panel's to remove");
    chmodSync(reg.dir, 0o755);
    assert.deepEqual(reg.list(), [], "a directory others may write is not believed");
  });

  it("a panel lists its siblings without their tokens and answers a sibling's route with that sibling's answer", async () => {
    await w.start("north");
    const alive = new Set([process.pid, 3001, 3002]);
    const reg = new ShepherdRegistry(join(w.root, "reg3", "panel", "shepherds"), (pid) => alive.has(pid));
    reg.register({ pid: 3001, port: w.port, token: w.server.auth.token, cwd: "/sibling", startedAt: "2026-01-01T00:00:00Z" });
    // A sibling whose port answers nothing.
    reg.register({ pid: 3002, port: 9, token: TOKEN, cwd: "/gone", startedAt: "2026-01-01T00:02:00Z" });
    const own = new PanelServer({ entry: w.entry, shepherds: { registry: reg, selfPid: process.pid, stablePort: w.port } });
    await own.start();
    reg.register({ pid: process.pid, port: own.port, token: own.auth.token, cwd: "/own", startedAt: "2026-01-01T00:01:00Z" });
    const get = (path: string) => ask(own.port, { path, headers: { authorization: `Bearer ${own.auth.token}` } });
    try {
      const listed = await get("/api/v1/shepherds");
      assert.equal(listed.status, 200, listed.text);
      assert.ok(!listed.text.includes(w.server.auth.token) && !listed.text.includes(own.auth.token), "no token in the list");
      const views = (listed.json() as { shepherds: { id: string; self: boolean; stable: boolean; cwd: string }[] }).shepherds;
      assert.deepEqual(
        views.map((v) => [v.id, v.self, v.stable, v.cwd]),
        [
          ["3001", false, true, "/sibling"],
          [String(process.pid), true, false, "/own"],
          ["3002", false, false, "/gone"],
        ],
      );
      const herd = await get("/api/v1/shepherds/3001/api/v1/sheep");
      assert.equal(herd.status, 200, herd.text);
      assert.deepEqual(
        (herd.json() as { sheep: { label: string }[] }).sheep.map((s) => s.label),
        ["north"],
      );
      assert.equal((await get("/api/v1/shepherds/3001/api/v1/events")).status, 404, "the event stream is not carried");
      assert.equal((await get("/api/v1/shepherds/4242/api/v1/sheep")).status, 404, "no such shepherd");
      const down = await get("/api/v1/shepherds/3002/api/v1/sheep");
      assert.equal(down.status, 502);
      assert.match(down.text, /shepherd_unreachable/);
      assert.equal((await ask(own.port, { path: "/api/v1/shepherds" })).status, 401, "the list needs the token like every route");
    } finally {
      await own.stop();
    }
  });

  it("an action on a sibling's sheep takes effect there, refused by its own rules; a stale or foreign entry and a refused token are refused here", async () => {
    const south = await w.start("south");
    const alive = new Set([process.pid, 5001, 5002, 5003]);
    const reg = new ShepherdRegistry(join(w.root, "reg5", "panel", "shepherds"), (pid) => alive.has(pid));
    reg.register({ pid: 5001, port: w.port, token: w.server.auth.token, cwd: "/sibling", startedAt: "2026-01-01T00:00:00Z" });
    // The same sibling's port under a token it does not hold (an entry left from before a new token).
    reg.register({ pid: 5002, port: w.port, token: TOKEN, cwd: "/stale", startedAt: "2026-01-01T00:00:01Z" });
    reg.register({ pid: 5003, port: w.port, token: w.server.auth.token, cwd: "/loose", startedAt: "2026-01-01T00:00:02Z" });
    chmodSync(join(reg.dir, "5003.json"), 0o644);
    const own = new PanelServer({ entry: w.entry, shepherds: { registry: reg, selfPid: process.pid, stablePort: 1 } });
    await own.start();
    const send = (path: string, body: object = {}) =>
      ask(own.port, {
        method: "POST",
        path,
        headers: { authorization: `Bearer ${own.auth.token}`, "content-type": "application/json" },
        body,
      });
    const sheep = (pid: number, rest: string) => `/api/v1/shepherds/${pid}/api/v1/sheep/${south.agentId}${rest}`;
    try {
      const prompted = await send(sheep(5001, "/prompt"), { message: "from the other page" });
      assert.equal(prompted.status, 200, prompted.text);
      const { promptId } = prompted.json() as { promptId: string };
      assert.equal(w.shepherd.registry.prompts.get(promptId)?.agentId, south.agentId, "the prompt is the sibling's own");
      const busy = await send(sheep(5001, "/prompt"), { message: "again" });
      assert.equal(busy.status, 409, busy.text);
      assert.match((busy.json() as { code: string; message: string }).message, /^\[prompt_pending\]/, "its refusal, as it answered it");
      const reply = await send(sheep(5001, "/reply"), { messageId: "m_0000000000", text: "yes" });
      assert.equal((reply.json() as { code: string }).code, "unknown_message", reply.text);
      assert.equal(reply.status, 404);
      const stopped = await send(sheep(5001, "/interrupt"));
      assert.equal(stopped.status, 200, stopped.text);
      w.world.answer(south.agentId, promptId, "stopped", "cancelled");
      await w.shepherd.wait([promptId as never], { timeoutSec: 2 });
      const closed = await send(sheep(5001, "/close"));
      assert.equal(closed.status, 200, closed.text);
      assert.equal(w.shepherd.registry.agents.get(south.agentId)?.state, "closed", "closed there");
      const late = await send(sheep(5001, "/prompt"), { message: "too late" });
      assert.equal((late.json() as { code: string }).code, "agent_closed", late.text);
      for (const a of [prompted, busy, reply, stopped, closed, late])
        assert.ok(!a.text.includes(w.server.auth.token), "the sibling's token never reaches the page");

      const refused = await send(sheep(5002, "/prompt"), { message: "x" });
      assert.equal(refused.status, 502, "a token the sibling refuses is no 401 of this page's own");
      assert.match(refused.text, /shepherd_unreachable.*refused the token its registry entry holds/);
      assert.equal((await send(sheep(5003, "/close"))).status, 404, "an entry others may read or write is not believed");
      alive.delete(5001);
      const gone = await send(sheep(5001, "/close"));
      assert.equal(gone.status, 404, gone.text);
      assert.match(gone.text, /no running shepherd/);
      assert.equal(existsSync(join(reg.dir, "5001.json")), false, "the stale entry is dropped");
      alive.add(5001);
      reg.register({ pid: 5001, port: w.port, token: w.server.auth.token, cwd: "/sibling", startedAt: "2026-01-01T00:00:00Z" });
      // A closed sheep's pane is refused by its own shepherd: its [code] comes back as it answered.
      const keys = await send(sheep(5001, "/terminal"), { keys: "rm -rf ~\r" });
      assert.equal((keys.json() as { code: string }).code, "agent_closed", keys.text);
      assert.equal(keys.status, 409);
      const stream = await ask(own.port, { path: sheep(5001, "/terminal"), headers: { authorization: `Bearer ${own.auth.token}` } });
      assert.equal((stream.json() as { code: string }).code, "agent_closed", stream.text);
      assert.ok(!stream.text.includes(w.server.auth.token) && !keys.text.includes(w.server.auth.token));
    } finally {
      await own.stop();
    }
  });
});
