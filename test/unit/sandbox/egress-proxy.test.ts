/**
 * The egress proxy on real sockets: a Unix socket per sheep, real CONNECT tunnels and forwarded
 * requests to a real HTTP server on 127.0.0.1, names resolved by an injected lookup (so a test can
 * make an allowed name resolve to loopback or a metadata address without touching DNS).
 */
import assert from "node:assert/strict";
import { chmod, link, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { execa } from "execa";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import type { AuditInput } from "../../../src/ports/audit.ts";
import { readEgressFile } from "../../../src/protocol/egress-log.ts";
import { egressPolicy } from "../../../src/sandbox/egress/policy.ts";
import { EgressProxy, type Lookup } from "../../../src/sandbox/egress/proxy.ts";
import { connectTunnel, getThrough, plainRequest, targetServer, tempDir } from "../../support/egress-sockets.ts";

const names: Record<string, string[]> = {
  "evil.test": ["127.0.0.1"],
  "meta.test": ["169.254.169.254"],
  "meta6.test": ["fd00:ec2::254"],
  "mapped.test": ["::ffff:127.0.0.1"],
};
const lookup: Lookup = async (h) => names[h] ?? [];

async function world(t: Parameters<typeof tempDir>[0], providerUrls: string[], allow: string[], o: { maxTunnels?: number } = {}) {
  const dir = await tempDir(t);
  const audit: AuditInput[] = [];
  const proxy = new EgressProxy({ lookup, audit: (e) => audit.push(e), ...o });
  t.after(() => proxy.closeAll());
  const open = async (id: string) => {
    const socketPath = join(dir, "s", `${id}.sock`);
    const log = await proxy.open(id, { socketPath, policy: egressPolicy(providerUrls, allow), logFile: join(dir, `${id}.egress.jsonl`) });
    return { socketPath, log, logFile: join(dir, `${id}.egress.jsonl`) };
  };
  return { dir, audit, proxy, open };
}

test("the provider's exact address is reached through CONNECT, bytes counted both ways and logged; socket 0600 in a 0700 dir", async (t) => {
  const { port } = await targetServer(t);
  const w = await world(t, [`http://127.0.0.1:${port}/v1`], []);
  const s = await w.open("a1");
  assert.equal((await stat(s.socketPath)).mode & 0o777, 0o600);
  assert.equal((await stat(join(w.dir, "s"))).mode & 0o777, 0o700);
  const tunnel = await connectTunnel(s.socketPath, `127.0.0.1:${port}`);
  assert.equal(tunnel.status, 200);
  const request = `GET /models HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
  const text = await getThrough(tunnel.socket, "/models", `127.0.0.1:${port}`);
  assert.match(text, /hello \/models$/);
  await s.log.flushed();
  // The tunnel's log entry is written when it closes; wait for the proxy's side of the close.
  await waitFor(() => s.log.counts().allowed === 1);
  const [entry] = s.log.last(1);
  assert.equal(entry?.verdict, "allowed");
  assert.equal(entry?.target, `127.0.0.1:${port}`);
  assert.equal(entry?.method, "CONNECT");
  assert.equal(entry?.address, "127.0.0.1");
  assert.equal(entry?.bytesUp, Buffer.byteLength(request));
  assert.equal(entry?.bytesDown, Buffer.byteLength(text));
  await s.log.flushed();
  const onDisk = (await readEgressFile(s.logFile, 10))?.entries ?? [];
  assert.deepEqual(onDisk, s.log.last(10));
  assert.equal((await stat(s.logFile)).mode & 0o777, 0o600);
  assert.deepEqual(w.audit, []);
});

test("a plain HTTP request with an absolute URI is forwarded, its bodies counted", async (t) => {
  const { port } = await targetServer(t);
  const w = await world(t, [], [`127.0.0.1:${port}`]);
  const s = await w.open("a1");
  const r = await plainRequest(s, `http://127.0.0.1:${port}/v1/chat`, "ping");
  assert.deepEqual(r, { status: 200, text: "echo ping" });
  await waitFor(() => s.log.counts().allowed === 1);
  const [entry] = s.log.last(1);
  assert.deepEqual(
    { verdict: entry?.verdict, method: entry?.method, target: entry?.target, up: entry?.bytesUp, down: entry?.bytesDown },
    { verdict: "allowed", method: "POST", target: `127.0.0.1:${port}`, up: 4, down: 9 },
  );
});

test("a host on no list is refused (CONNECT and plain), logged and told to the audit sink; the provider's port only", async (t) => {
  const { port } = await targetServer(t);
  const w = await world(t, [`http://127.0.0.1:${port}/v1`], ["api.example.com:443"]);
  const s = await w.open("a1");
  const other = await connectTunnel(s.socketPath, "other.example.org:443");
  assert.equal(other.status, 403);
  assert.match(other.head, /X-Egress-Refused: not_allowed/);
  // The provider's host on another port is not the provider.
  const wrongPort = await connectTunnel(s.socketPath, `127.0.0.1:${port + 1}`);
  assert.equal(wrongPort.status, 403);
  const plain = await plainRequest(s, "http://other.example.org/x");
  assert.deepEqual(plain, { status: 403, text: "", refused: "not_allowed" });
  await waitFor(() => s.log.counts().refused === 3);
  assert.deepEqual(s.log.counts(), { allowed: 0, refused: 3 });
  assert.deepEqual(
    w.audit.map((e) => [e.event, e.action, e.agentId, e.reason, e.target]),
    [
      ["refusal", "egress", "a1", "not_allowed", "other.example.org:443"],
      ["refusal", "egress", "a1", "not_allowed", `127.0.0.1:${port + 1}`],
      ["refusal", "egress", "a1", "not_allowed", "other.example.org:80"],
    ],
  );
});

test("an allowed name that resolves to 127.0.0.1 is refused, unless that exact address is listed too", async (t) => {
  const { port } = await targetServer(t);
  const w = await world(t, [], [`evil.test:${port}`, "mapped.test"]);
  const s = await w.open("a1");
  const refused = await connectTunnel(s.socketPath, `evil.test:${port}`);
  assert.equal(refused.status, 403);
  assert.match(refused.head, /X-Egress-Refused: loopback/);
  const mapped = await connectTunnel(s.socketPath, `mapped.test:${port}`);
  assert.match(mapped.head, /X-Egress-Refused: loopback/);
  const plain = await plainRequest(s, `http://evil.test:${port}/x`);
  assert.equal(plain.refused, "loopback");

  const listedToo = await world(t, [], [`evil.test:${port}`, "127.0.0.1"]);
  const s2 = await listedToo.open("a2");
  const ok = await connectTunnel(s2.socketPath, `evil.test:${port}`);
  assert.equal(ok.status, 200);
  assert.match(await getThrough(ok.socket, "/x", `evil.test:${port}`), /hello \/x$/);
});

test("cloud metadata addresses are refused, by name or as an address, IPv4 and IPv6", async (t) => {
  const w = await world(t, [], ["meta.test", "meta6.test", "*.example.com"]);
  const s = await w.open("a1");
  for (const [target, reason] of [
    ["meta.test:80", "metadata"],
    ["meta6.test:80", "metadata"],
    ["169.254.169.254:80", "not_allowed"],
    ["[fd00:ec2::254]:80", "not_allowed"],
    // A wildcard names subdomains; an address is never matched by one.
    ["example.com:443", "not_allowed"],
  ] as const) {
    const r = await connectTunnel(s.socketPath, target);
    assert.equal(r.status, 403, target);
    assert.match(r.head, new RegExp(`X-Egress-Refused: ${reason}`), target);
  }
  const plain = await plainRequest(s, "http://meta.test/latest/meta-data/");
  assert.equal(plain.refused, "metadata");
});

test("the log file is bounded: past its cap it rotates to .1, and the newest entries stay readable", async (t) => {
  const dir = await tempDir(t);
  const proxy = new EgressProxy({ lookup });
  t.after(() => proxy.closeAll());
  const logFile = join(dir, "a1.egress.jsonl");
  const socketPath = join(dir, "a1.sock");
  const log = await proxy.open("a1", { socketPath, policy: egressPolicy([], []), logFile, log: { maxBytes: 800, keep: 5 } });
  for (let i = 0; i < 30; i++) {
    const r = await connectTunnel(socketPath, `host${i}.example.org:443`);
    assert.equal(r.status, 403);
  }
  await waitFor(() => log.counts().refused === 30);
  await log.flushed();
  const size = (await stat(logFile)).size;
  const older = (await stat(`${logFile}.1`)).size;
  assert.ok(size <= 800 && older <= 800, `${size} and ${older} bytes, cap 800`);
  assert.equal(log.last(100).length, 5);
  const lines = (await readFile(logFile, "utf8")).trim().split("\n");
  assert.equal(JSON.parse(lines.at(-1)!).target, "host29.example.org:443");
  assert.deepEqual(
    ((await readEgressFile(logFile, 2))?.entries ?? []).map((e) => e.target),
    ["host28.example.org:443", "host29.example.org:443"],
  );
});

test("one sheep's stuck tunnels (at its cap) delay neither another sheep nor are they shared", async (t) => {
  const { port } = await targetServer(t);
  // A destination that accepts and never says a word.
  const held: Socket[] = [];
  const silent = createServer((c) => held.push(c));
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
  t.after(async () => {
    for (const c of held) c.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });
  const silentPort = (silent.address() as { port: number }).port;
  const w = await world(t, [], ["127.0.0.1"], { maxTunnels: 2 });
  const a = await w.open("a1");
  const b = await w.open("b1");
  const stuck = [await connectTunnel(a.socketPath, `127.0.0.1:${silentPort}`), await connectTunnel(a.socketPath, `127.0.0.1:${silentPort}`)];
  for (const s of stuck) {
    assert.equal(s.status, 200);
    s.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  const third = await connectTunnel(a.socketPath, `127.0.0.1:${port}`);
  assert.equal(third.status, 503);
  assert.match(third.head, /too_many/);
  // b1 works while a1's tunnels still hang.
  const fromB = await connectTunnel(b.socketPath, `127.0.0.1:${port}`);
  assert.equal(fromB.status, 200);
  assert.match(await getThrough(fromB.socket, "/b", `127.0.0.1:${port}`), /hello \/b$/);
  assert.ok(stuck.every((s) => !s.socket.destroyed));
  // A broken client of a1 (garbage instead of HTTP) ends only its own connection.
  const garbage = await connectTunnel(a.socketPath, "\u0000\u0001 nonsense");
  assert.equal(garbage.status, 400);
  const again = await plainRequest(b, `http://127.0.0.1:${port}/again`);
  assert.equal(again.text, "hello /again");
  for (const s of stuck) s.socket.destroy();
});

test("closing one sheep's socket ends its tunnels and removes its socket file; the other's stays", async (t) => {
  const { port } = await targetServer(t);
  const w = await world(t, [], ["127.0.0.1"]);
  const a = await w.open("a1");
  const b = await w.open("b1");
  const open = await connectTunnel(a.socketPath, `127.0.0.1:${port}`);
  const closed = new Promise((r) => open.socket.once("close", r));
  await w.proxy.close("a1");
  await closed;
  await assert.rejects(stat(a.socketPath));
  assert.equal((await plainRequest(b, `http://127.0.0.1:${port}/b`)).text, "hello /b");
});

test("a proxy that closes late (an older agent on the host) leaves the socket a newer one made at the same path, which goes on serving", async (t) => {
  const { port } = await targetServer(t);
  const dir = await tempDir(t);
  const socketPath = join(dir, "s", "a1.sock");
  const at = (proxy: EgressProxy, name: string) =>
    proxy.open("a1", { socketPath, policy: egressPolicy([], ["127.0.0.1"]), logFile: join(dir, `${name}.egress.jsonl`) });
  const older = new EgressProxy({ lookup });
  const newer = new EgressProxy({ lookup });
  t.after(() => Promise.all([older.closeAll(), newer.closeAll()]));
  await at(older, "older");
  await at(newer, "newer");
  await older.close("a1");
  assert.ok((await stat(socketPath)).isSocket(), "the newer proxy's socket is still there");
  assert.equal((await plainRequest({ socketPath }, `http://127.0.0.1:${port}/new`)).text, "hello /new");
  await newer.close("a1");
  await assert.rejects(stat(socketPath), "its own close removes it");
  assert.deepEqual((await readdir(join(dir, "s"))).sort(), [], "no temporary name is left behind");
});

test("bounds: an idle tunnel is ended and logged, a head over the cap ends its connection, a failed connect is told", async (t) => {
  const held: Socket[] = [];
  const silent = createServer((c) => held.push(c));
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
  t.after(async () => {
    for (const c of held) c.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });
  const silentPort = (silent.address() as { port: number }).port;
  const dir = await tempDir(t);
  const proxy = new EgressProxy({ lookup, idleTimeoutMs: 200, maxHeaderBytes: 1024 });
  t.after(() => proxy.closeAll());
  const socketPath = join(dir, "a1.sock");
  const log = await proxy.open("a1", { socketPath, policy: egressPolicy([], ["127.0.0.1"]), logFile: join(dir, "a1.jsonl") });
  const idle = await connectTunnel(socketPath, `127.0.0.1:${silentPort}`);
  assert.equal(idle.status, 200);
  await new Promise((r) => idle.socket.once("close", r));
  await waitFor(() => log.counts().allowed === 1);
  assert.equal(log.last(1)[0]?.reason, undefined);

  const big = await new Promise<string>((resolve) => {
    const s = connect(socketPath);
    let text = "";
    s.on("data", (d: Buffer) => {
      text += d.toString();
    });
    s.on("close", () => resolve(text));
    s.on("error", () => resolve(text));
    s.write(`CONNECT 127.0.0.1:${silentPort} HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(4096)}\r\n\r\n`);
  });
  assert.match(big, /^HTTP\/1\.1 431 /);
  assert.equal(log.counts().allowed, 1, "the oversized head never reached a decision");

  // A port nothing listens on: allowed by the policy, the connect fails.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
  const deadPort = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const failed = await connectTunnel(socketPath, `127.0.0.1:${deadPort}`);
  assert.equal(failed.status, 502);
  await waitFor(() => log.counts().allowed === 2);
  assert.equal(log.last(1)[0]?.reason, "connect_failed");
});

test("a link or FIFO the sheep put in place of its log is replaced: the proxy never writes to a file the sheep chose", async (t) => {
  const dir = await tempDir(t);
  const victim = join(dir, "victim.txt");
  await writeFile(victim, "the user's file\n");
  const proxy = new EgressProxy({ lookup });
  t.after(() => proxy.closeAll());
  for (const [i, plant] of [
    (f: string) => symlink(victim, f),
    (f: string) => link(victim, f),
    (f: string) => execa("mkfifo", [f]).then(() => undefined),
  ].entries()) {
    const logFile = join(dir, `a${i}.jsonl`);
    await plant(logFile);
    const socketPath = join(dir, `a${i}.sock`);
    const log = await proxy.open(`a${i}`, { socketPath, policy: egressPolicy([], []), logFile });
    assert.equal((await connectTunnel(socketPath, "elsewhere.example:443")).status, 403);
    await log.flushed();
    const st = await lstat(logFile);
    assert.ok(st.isFile() && st.nlink === 1, `plant ${i}: a regular file of its own`);
    assert.match(await readFile(logFile, "utf8"), /elsewhere\.example:443/);
  }
  assert.equal(await readFile(victim, "utf8"), "the user's file\n");
});

test("a socket directory that is a link is refused, and what it points to keeps its mode", async (t) => {
  const dir = await tempDir(t);
  const elsewhere = join(dir, "elsewhere");
  await mkdir(elsewhere, { mode: 0o755 });
  await chmod(elsewhere, 0o755);
  await symlink(elsewhere, join(dir, "s"));
  const proxy = new EgressProxy({ lookup });
  t.after(() => proxy.closeAll());
  await assert.rejects(
    proxy.open("a1", { socketPath: join(dir, "s", "a1.sock"), policy: egressPolicy([], []), logFile: join(dir, "a1.jsonl") }),
    /\[invalid_params\]/,
  );
  assert.equal((await stat(elsewhere)).mode & 0o777, 0o755);
});

test("refusals told to the audit sink are bounded per sheep and minute; the egress log keeps every one", async (t) => {
  const dir = await tempDir(t);
  const audit: AuditInput[] = [];
  let now = 1_000_000;
  const proxy = new EgressProxy({ lookup, audit: (e) => audit.push(e), auditPerMinute: 3, now: () => now });
  t.after(() => proxy.closeAll());
  const socketPath = join(dir, "a1.sock");
  const log = await proxy.open("a1", { socketPath, policy: egressPolicy([], []), logFile: join(dir, "a1.jsonl") });
  for (let i = 0; i < 8; i++) assert.equal((await connectTunnel(socketPath, `h${i}.example:443`)).status, 403);
  assert.equal(log.counts().refused, 8);
  assert.deepEqual(
    audit.map((e) => e.target),
    ["h0.example:443", "h1.example:443", "h2.example:443"],
  );
  now += 60_000;
  assert.equal((await connectTunnel(socketPath, "later.example:443")).status, 403);
  assert.equal(audit.length, 4);
  assert.equal(audit[3]?.target, "later.example:443");
  assert.match(audit[3]?.error ?? "", /^5 more egress refusals/);
});

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
