/**
 * The egress proxy's CPU per relayed chunk (issue 33), against a bare node relay with the same
 * peers: CPU time (process.cpuUsage in the relay's own process, bench/lib/egress-relay.ts), not wall
 * time, so the figure holds on a busy shared machine. Not part of `npm run bench`; run by hand:
 *
 *   node --import tsx bench/egress-cpu.ts [--tunnels 16] [--chunks 200] [--size 200] [--gap 1] [--runs 5] [--prof <dir>]
 *
 * Each of `tunnels` tunnels (CONNECT over the relay's Unix socket to a TCP server here) carries
 * `chunks` chunks of `size` bytes down, one chunk in flight at a time over all tunnels and `gap` ms
 * between them, so each is a wake-up, a read and a write of its own in the relay, as an answer
 * streamed at a few events a second is. Runs alternate the two relays; the medians are printed in
 * µs per chunk. --prof writes a V8 CPU profile of the proxy's process (--cpu-prof) into <dir>.
 *
 * What it showed (docs/performance.md): the proxy costs what the bare relay costs at every gap; the
 * cost is waking an idle process, and grows with the time it slept (cold caches on a busy machine).
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "./lib/stats.ts";

const { values } = parseArgs({
  options: {
    tunnels: { type: "string", default: "16" },
    chunks: { type: "string", default: "200" },
    size: { type: "string", default: "200" },
    runs: { type: "string", default: "5" },
    gap: { type: "string", default: "1" },
    prof: { type: "string" },
  },
});
const tunnels = Number(values.tunnels);
const chunks = Number(values.chunks);
const gap = Number(values.gap);
const chunk = Buffer.alloc(Number(values.size), "x");

const dir = await mkdtemp(join(tmpdir(), "egcpu-"));
const upstreams: Socket[] = [];
const model = createServer((s) => {
  upstreams.push(s);
  s.on("data", () => {});
  // A relay's end resets these: that ends a run, it is no failure.
  s.on("error", () => {});
});
await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
const port = (model.address() as { port: number }).port;

async function relay(mode: "proxy" | "bare", socketPath: string): Promise<ChildProcess> {
  const execArgv = ["--import", "tsx", ...(values.prof && mode === "proxy" ? ["--cpu-prof", "--cpu-prof-dir", values.prof] : [])];
  const child = fork(join(import.meta.dirname, "lib", "egress-relay.ts"), [mode, socketPath, String(port)], { execArgv, stdio: "inherit" });
  await new Promise((resolve) => child.once("message", resolve));
  return child;
}

function tunnel(socketPath: string): Promise<{ client: Socket; upstream: Socket }> {
  return new Promise((resolve, reject) => {
    const before = upstreams.length;
    const client = connect(socketPath);
    client.once("error", reject);
    client.once("data", (d) => {
      if (!d.toString().startsWith("HTTP/1.1 200")) return reject(new Error(`refused: ${d}`));
      const wait = () => (upstreams.length > before ? resolve({ client, upstream: upstreams[upstreams.length - 1]! }) : setImmediate(wait));
      wait();
    });
    client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  });
}

/**
 * The tunnels take turns, one chunk in flight at a time, `gap` ms between chunks: each chunk wakes the
 * relay's event loop on its own, as a few events a second from each of 16 sheep do (gap 0: the next
 * chunk goes as soon as the last arrived).
 */
function stream(pairs: { client: Socket; upstream: Socket }[]): Promise<void> {
  return new Promise<void>((resolve) => {
    let n = 0;
    const next = () => {
      if (n === pairs.length * chunks) return resolve();
      const { client, upstream } = pairs[n % pairs.length]!;
      n++;
      let got = 0;
      const onData = (d: Buffer) => {
        got += d.length;
        if (got < chunk.length) return;
        client.off("data", onData);
        if (gap > 0) setTimeout(next, gap);
        else setImmediate(next);
      };
      client.on("data", onData);
      upstream.write(chunk);
    };
    next();
  });
}

async function measure(mode: "proxy" | "bare", run: number): Promise<number> {
  const socketPath = join(dir, `${mode}${run}.sock`);
  const r = await relay(mode, socketPath);
  const pairs = [];
  for (let i = 0; i < tunnels; i++) pairs.push(await tunnel(socketPath));
  // A first stream warms the relay's code; the measured one follows.
  await stream(pairs);
  r.send("start");
  await stream(pairs);
  r.send("stop");
  const { cpuUs, sysUs } = (await new Promise((resolve) => r.once("message", resolve))) as { cpuUs: number; sysUs: number };
  sys.push(sysUs / cpuUs);
  for (const p of pairs) p.client.destroy();
  r.send("exit");
  await new Promise((resolve) => r.once("exit", resolve));
  for (const u of upstreams) u.destroy();
  upstreams.length = 0;
  return cpuUs / (tunnels * chunks);
}

const sys: number[] = [];
const proxy: number[] = [];
const bare: number[] = [];
for (let i = 0; i < Number(values.runs); i++) {
  for (const mode of i % 2 === 0 ? (["proxy", "bare"] as const) : (["bare", "proxy"] as const)) {
    const us = await measure(mode, i);
    (mode === "proxy" ? proxy : bare).push(us);
    process.stdout.write(`  run ${i + 1} ${mode}: ${us.toFixed(1)} µs/chunk\n`);
  }
}
process.stdout.write(
  `egress CPU per relayed chunk (${tunnels} tunnels × ${chunks} chunks of ${chunk.length} B, ${gap} ms apart): proxy ${median(proxy).toFixed(1)} µs, bare relay ${median(bare).toFixed(1)} µs (medians of ${proxy.length}; ${Math.round(median(sys) * 100)} % of it in the kernel)\n`,
);
model.close();
await rm(dir, { recursive: true, force: true });
