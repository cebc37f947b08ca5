/**
 * The egress proxy's cost (issue 33): one chat request to the scripted model on a new connection,
 * direct against through the sandbox's way (a forwarder on a loopback port → the proxy's Unix
 * socket → the proxy's checked connect), alternating, medians side by side. And the memory the proxy
 * adds for 16 sheep: a child process opens 16 sockets and runs a tunnel through each at once, its
 * RSS read before the proxy is made and after (bench/lib/egress-memory.ts).
 */
import { execa } from "execa";
import { request, type RequestOptions } from "node:http";
import type { Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: plain JS without types, as the launcher runs it.
import { startForwarder } from "../../src/sandbox/egress/forwarder.mjs";
import { egressPolicy } from "../../src/sandbox/egress/policy.ts";
import { EgressProxy } from "../../src/sandbox/egress/proxy.ts";
import { repoRoot } from "../../test/support/rpc-shepherd.ts";

export interface EgressConfig {
  requests: number;
  sheep: number;
}

export interface EgressFigures {
  directMs: number[];
  proxiedMs: number[];
  sheep: number;
  rssBeforeKiB: number;
  rssAfterKiB: number;
}

const BODY = JSON.stringify({ model: "scripted-model", stream: true, messages: [{ role: "user", content: "bench egress" }] });

/** One request; resolves when the whole answer is read. `tunnel` is a socket already through CONNECT. */
function chat(url: URL, tunnel?: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    const o: RequestOptions = {
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: `${url.pathname}/chat/completions`,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(BODY), authorization: "Bearer x" },
      // node uses createConnection only without an agent (agent: false makes one, which would go
      // straight to the model after the CONNECT): a new connection either way.
      ...(tunnel ? { createConnection: () => tunnel } : { agent: false }),
    };
    const req = request(o, (res) => {
      res.resume();
      res.once("end", () => resolve());
      res.once("error", reject);
    });
    req.once("error", reject);
    req.end(BODY);
  });
}

function connectVia(port: number, target: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "CONNECT", path: target, agent: false });
    req.once("connect", (res, socket) => (res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT ${res.statusCode}`))));
    req.once("error", reject);
    req.end();
  });
}

export async function runEgress(baseUrl: string, cfg: EgressConfig, say: (s: string) => void): Promise<EgressFigures> {
  const url = new URL(baseUrl);
  const dir = await mkdtemp(join(tmpdir(), "egb-"));
  const proxy = new EgressProxy();
  try {
    const socketPath = join(dir, "a.sock");
    await proxy.open("bench", { socketPath, policy: egressPolicy([baseUrl], []), logFile: join(dir, "a.jsonl") });
    const fwd = (await startForwarder(socketPath)) as { port: number; close(): Promise<void> };
    const directMs: number[] = [];
    const proxiedMs: number[] = [];
    for (let i = 0; i < cfg.requests + 2; i++) {
      const t0 = performance.now();
      await chat(url);
      const t1 = performance.now();
      await chat(url, await connectVia(fwd.port, url.host));
      const t2 = performance.now();
      // The first of each is node warming up, not the proxy.
      if (i >= 2) {
        directMs.push(t1 - t0);
        proxiedMs.push(t2 - t1);
      }
    }
    await fwd.close();
    say(`  egress: ${cfg.requests} requests each way`);
    const child = await execa(process.execPath, ["--import", "tsx", join(repoRoot, "bench", "lib", "egress-memory.ts"), baseUrl, String(cfg.sheep)], {
      cwd: repoRoot,
      timeout: 60_000,
    });
    const { before, after } = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as { before: number; after: number };
    say(`  egress: ${cfg.sheep} sheep sockets, RSS ${before} KiB -> ${after} KiB`);
    return { directMs, proxiedMs, sheep: cfg.sheep, rssBeforeKiB: before, rssAfterKiB: after };
  } finally {
    await proxy.closeAll();
    await rm(dir, { recursive: true, force: true });
  }
}
