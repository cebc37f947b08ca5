/**
 * The panel's port on a real pi shepherd: `/shepherd panel on` prints a URL with a token that
 * the port answers to; the port closes while a /reload holds the shepherd away and opens again
 * after it on the same port with the same token (so an open page goes on); `off` closes it and a
 * reload keeps it off; a port another process took during a reload leaves it off with its token
 * and sessions let go; a port changed in the settings applies on reload; the user's
 * `panel.autostart` turns it on when the session begins; and it closes when pi quits.
 */
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { MAX_CONNECTIONS } from "../../src/panel/server.ts";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { panelOn } from "../support/panel-browser.ts";
import { ask } from "../support/panel-world.ts";
import { repoRoot } from "../support/rpc-shepherd.ts";
import type { Scene } from "../support/scene.ts";

const portOf = (url: string) => Number(new URL(url).port);
const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, "");

/** Whether anything accepts a connection on 127.0.0.1:port now. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

async function until(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("e2e: the panel's port", () => {
  let world: E2eWorld;
  let scene: Scene;
  let url: string;

  before(async () => {
    world = await e2eWorld("panel-port");
    scene = world.scene({ extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
    await scene.start("alpha");
    url = await panelOn(scene.shepherd);
  });
  after(async () => {
    await world?.cleanup();
  });

  const sheepWith = (port: number, token: string) => ask(port, { path: "/api/v1/sheep", headers: { authorization: `Bearer ${token}` } });
  const panelText = async (args: string) => (await scene.shepherd.slash(`/shepherd panel ${args}`)).map((n) => n.text).join("\n");

  it("on: the URL's token opens the API on 127.0.0.1; url says it again; on again keeps it", async () => {
    const r = await sheepWith(portOf(url), tokenOf(url));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      (r.json() as { sheep: { label: string }[] }).sheep.map((s) => s.label),
      ["alpha"],
    );
    assert.ok((await panelText("url")).includes(url));
    assert.match(await panelText("on"), new RegExp(`The panel is on: ${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  it("a /reload closes the port while the shepherd is away and opens it again on the same port, with the same token", async () => {
    const port = portOf(url);
    await scene.shepherd.idle();
    const back = scene.shepherd.next(
      (e) => e.type === "extension_ui_request" && e.method === "notify" && /pi-shepherd panel: /.test(String(e.message)),
      60_000,
    );
    const reload = scene.shepherd.command({ type: "prompt", message: "/test-reload 3000" });
    await until("the port closed during the reload", async () => !(await listening(port)));
    await reload;
    const told = await back;
    assert.equal(String((told as { message?: unknown }).message), `pi-shepherd panel: ${url}`);
    await until("the port is open again", () => listening(port));
    const r = await sheepWith(port, tokenOf(url));
    assert.equal(r.status, 200, r.text);
    assert.ok((await panelText("url")).includes(url), "the same URL");
  });

  it("a port taken while a /reload holds the shepherd away: the panel is off, says to turn it on again, and its token and sessions open nothing ever after", async () => {
    const port = portOf(url);
    const opened = await ask(port, {
      method: "POST",
      path: "/api/v1/session",
      headers: { authorization: `Bearer ${tokenOf(url)}`, "content-type": "application/json" },
      body: {},
    });
    assert.equal(opened.status, 200, opened.text);
    const key = (opened.json() as { session: string }).session;
    const cookieValue = String(opened.headers["set-cookie"]).split(";")[0]!.split("=")[1]!;
    const session = (p: number) => ({ cookie: `pi_shepherd_panel_${p}=${cookieValue}`, "x-pi-shepherd-session": key });
    await scene.shepherd.idle();
    const lost = scene.shepherd.next(
      (e) => e.type === "extension_ui_request" && e.method === "notify" && /pi-shepherd panel: /.test(String(e.message)),
      60_000,
    );
    const reload = scene.shepherd.command({ type: "prompt", message: "/test-reload 3000" });
    await until("the port closed during the reload", async () => !(await listening(port)));
    // Another local process takes the port while no shepherd holds it: an open page would send it its cookie and key.
    const impostor = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      impostor.once("error", reject);
      impostor.listen({ host: "127.0.0.1", port, exclusive: true }, () => resolve());
    });
    try {
      await reload;
      const told = String(((await lost) as { message?: unknown }).message);
      assert.match(told, new RegExp(`the panel is off: something else holds port ${port} on 127\\.0\\.0\\.1 \\(taken while pi reloaded\\)`));
      assert.match(told, /token and every page's session are let go.*\/shepherd panel on turns it on again/s);
    } finally {
      await new Promise<void>((resolve) => impostor.close(() => resolve()));
    }
    // The port is free again and another reload follows: the panel stays off; nothing held comes back.
    await scene.shepherd.idle();
    await scene.shepherd.command({ type: "prompt", message: "/test-reload" });
    await until("the reloaded shepherd answers", async () => /The panel is off/.test(await panelText("url")));
    assert.equal(await listening(port), false, "no panel came back on the port");
    const again = await panelOn(scene.shepherd);
    assert.notEqual(tokenOf(again), tokenOf(url));
    assert.equal((await sheepWith(portOf(again), tokenOf(url))).status, 401, "the old token opens nothing");
    assert.equal((await ask(portOf(again), { path: "/api/v1/sheep", headers: session(portOf(again)) })).status, 401, "the captured session opens nothing");
    assert.equal((await sheepWith(portOf(again), tokenOf(again))).status, 200);
    url = again;
  });

  it("a port changed in the user's settings applies on reload, with a new token", async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen({ host: "127.0.0.1", port: 0 }, () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const settingsPath = join(scene.agentDir, "pi-shepherd", "settings.json");
    const before = JSON.parse(await readFile(settingsPath, "utf8").catch(() => "{}")) as Record<string, unknown>;
    await writeFile(settingsPath, JSON.stringify({ ...before, panel: { port: free } }));
    try {
      await scene.shepherd.idle();
      const back = scene.shepherd.next(
        (e) => e.type === "extension_ui_request" && e.method === "notify" && /pi-shepherd panel: http/.test(String(e.message)),
        60_000,
      );
      await scene.shepherd.command({ type: "prompt", message: "/test-reload" });
      const moved = /http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]+/.exec(String(((await back) as { message?: unknown }).message))?.[0];
      assert.ok(moved);
      assert.equal(portOf(moved), free, "on the port the settings name now");
      assert.notEqual(tokenOf(moved), tokenOf(url));
      assert.equal(await listening(portOf(url)), false, "the old port stays closed");
      assert.equal((await sheepWith(free, tokenOf(moved))).status, 200);
      url = moved;
    } finally {
      await writeFile(settingsPath, JSON.stringify(before));
    }
  });

  it("a local process opening 1,100 idle connections: the shepherd holds at most MAX_CONNECTIONS, closes each that sends no headers within seconds, and answers the token after", async () => {
    const port = portOf(url);
    const pid = scene.shepherd.proc.pid!;
    const fds = async () => (await readdir(`/proc/${pid}/fd`)).length;
    const before = await fds();
    const sockets: Socket[] = [];
    let closed = 0;
    try {
      for (let i = 0; i < 1100; i++) {
        const s = connect(port, "127.0.0.1");
        s.on("error", () => undefined);
        s.on("close", () => closed++);
        s.resume(); // reads, so it sees the panel's end
        sockets.push(s);
      }
      await until("every connection made or refused", async () => sockets.every((s) => !s.connecting));
      assert.ok((await fds()) <= before + MAX_CONNECTIONS + 16, `the shepherd holds ${(await fds()) - before} more descriptors`);
      // Past the cap each new connection is closed at once; those held are closed for sending no headers.
      await until("the panel let go of every idle connection", async () => (await fds()) <= before + 16, 20_000);
      await until("each client saw its connection closed", async () => closed === sockets.length, 10_000);
      assert.equal((await sheepWith(port, tokenOf(url))).status, 200, "the token still answers");
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it("off closes the port and its token is gone; a reload keeps it off; on again is a new token", async () => {
    const port = portOf(url);
    assert.match(await panelText("off"), new RegExp(`Panel off: port ${port} on 127\\.0\\.0\\.1 is closed`));
    assert.equal(await listening(port), false);
    assert.match(await panelText("url"), /The panel is off/);
    await scene.shepherd.idle();
    await scene.shepherd.command({ type: "prompt", message: "/test-reload" });
    await until("the reloaded shepherd answers", async () => /The panel is off/.test(await panelText("url")));
    const again = await panelOn(scene.shepherd);
    assert.notEqual(tokenOf(again), tokenOf(url));
    assert.equal((await sheepWith(portOf(again), tokenOf(url))).status, 401, "the old token opens nothing");
    assert.equal((await sheepWith(portOf(again), tokenOf(again))).status, 200);
    url = again;
  });

  it("the user's panel.autostart turns it on when the session begins; quitting pi closes the port", async () => {
    assert.match(await panelText("off"), /Panel off/);
    const settingsPath = join(scene.agentDir, "pi-shepherd", "settings.json");
    const before = JSON.parse(await readFile(settingsPath, "utf8").catch(() => "{}")) as Record<string, unknown>;
    await writeFile(settingsPath, JSON.stringify({ ...before, panel: { autostart: true } }));
    await scene.shepherd.idle();
    const on = scene.shepherd.next(
      (e) => e.type === "extension_ui_request" && e.method === "notify" && /pi-shepherd panel: http/.test(String(e.message)),
      60_000,
    );
    await scene.shepherd.command({ type: "prompt", message: "/test-reload" });
    const told = String(((await on) as { message?: unknown }).message);
    const auto = /http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]+/.exec(told)?.[0];
    assert.ok(auto, told);
    assert.equal((await sheepWith(portOf(auto), tokenOf(auto))).status, 200);
    await scene.ok({ action: "close", agentId: "alpha" });
    await scene.shepherd.stop();
    assert.equal(await listening(portOf(auto)), false, "the port closed with pi");
  });
});
