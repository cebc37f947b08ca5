/**
 * The sandbox's end: the forwarder turns a loopback TCP port into the proxy's Unix socket, and pi's
 * own HTTP dispatcher, given the proxy variables the launcher sets, sends a plain-http request to a
 * loopback model through it (as a CONNECT: pi's undici tunnels http origins too, and no default
 * NO_PROXY spares loopback). Real sockets end to end: dispatcher → forwarder → Unix socket → proxy →
 * an HTTP server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
// @ts-expect-error: plain JS without types, as the launcher runs it.
import { proxyEnv, startForwarder } from "../../../src/sandbox/egress/forwarder.mjs";
import { egressPolicy } from "../../../src/sandbox/egress/policy.ts";
import { EgressProxy } from "../../../src/sandbox/egress/proxy.ts";
import { connectTunnel, getThrough, plainRequest, targetServer, tempDir } from "../../support/egress-sockets.ts";
import { repoRoot } from "../../support/rpc-shepherd.ts";

interface Forwarder {
  port: number;
  close(): Promise<void>;
}

async function setup(t: Parameters<typeof tempDir>[0]) {
  const { port } = await targetServer(t);
  const dir = await tempDir(t);
  const proxy = new EgressProxy();
  t.after(() => proxy.closeAll());
  const socketPath = join(dir, "a1.sock");
  const log = await proxy.open("a1", { socketPath, policy: egressPolicy([`http://127.0.0.1:${port}/v1`], []), logFile: join(dir, "a1.jsonl") });
  const fwd = (await startForwarder(socketPath)) as Forwarder;
  t.after(() => fwd.close());
  return { port, log, fwd, proxy };
}

test("the forwarder pipes a plain request and a CONNECT tunnel from its loopback port to the proxy's socket", async (t) => {
  const { port, log, fwd } = await setup(t);
  const plain = await plainRequest({ port: fwd.port }, `http://127.0.0.1:${port}/plain`);
  assert.equal(plain.text, "hello /plain");
  const refused = await plainRequest({ port: fwd.port }, "http://example.org/x");
  assert.equal(refused.refused, "not_allowed");
  const { connect } = await import("node:net");
  const tcp = connect(fwd.port, "127.0.0.1");
  await new Promise((r) => tcp.once("connect", r));
  tcp.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  const head = await new Promise<string>((r) => tcp.once("data", (d: Buffer) => r(d.toString())));
  assert.match(head, /^HTTP\/1\.1 200/);
  assert.match(await getThrough(tcp, "/tunnel", `127.0.0.1:${port}`), /hello \/tunnel$/);
  await waitFor(() => log.counts().allowed === 2);
  assert.deepEqual(log.counts(), { allowed: 2, refused: 1 });
  // The socket itself is still the only way: the forwarder adds no decision of its own.
  const direct = await connectTunnel(join(log.file, "..", "a1.sock"), "example.org:443");
  assert.equal(direct.status, 403);
});

test("proxyEnv names the forwarder for http and https and empties NO_PROXY", () => {
  assert.deepEqual(proxyEnv(4321), {
    HTTP_PROXY: "http://127.0.0.1:4321",
    HTTPS_PROXY: "http://127.0.0.1:4321",
    http_proxy: "http://127.0.0.1:4321",
    https_proxy: "http://127.0.0.1:4321",
    NO_PROXY: "",
    no_proxy: "",
  });
});

test("pi's own HTTP dispatcher sends a plain-http loopback model request through HTTP_PROXY as a CONNECT", async (t) => {
  const { port, log, fwd, proxy } = await setup(t);
  Object.assign(process.env, proxyEnv(fwd.port));
  const dispatcher = pathToFileURL(join(repoRoot, "node_modules/@earendil-works/pi-coding-agent/dist/core/http-dispatcher.js")).href;
  const { configureHttpDispatcher } = (await import(dispatcher)) as { configureHttpDispatcher(): void };
  configureHttpDispatcher();
  const r = await fetch(`http://127.0.0.1:${port}/v1/models`);
  assert.equal(await r.text(), "hello /v1/models");
  // Not the provider's port: refused by the proxy, so pi's request fails.
  const refused = await fetch(`http://127.0.0.1:${port + 1}/v1/models`).then(
    (x) => `status ${x.status}`,
    () => "failed",
  );
  assert.equal(refused, "failed");
  // undici keeps the allowed tunnel in its pool; its log entry is written when it ends.
  await proxy.close("a1");
  assert.deepEqual(
    log
      .last(10)
      .map((e) => `${e.method} ${e.target} ${e.verdict}`)
      .sort(),
    [`CONNECT 127.0.0.1:${port + 1} refused`, `CONNECT 127.0.0.1:${port} allowed`].sort(),
  );
});

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
