/**
 * Run by bench/lib/egress-bench.ts as its own process: `<base URL> <n>`. Reads VmRSS once the proxy's
 * modules are loaded, opens n sheep sockets, runs one tunnel with a chat request through each at once
 * and keeps them open, reads VmRSS again, prints {"before","after"} in KiB.
 */
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { egressPolicy } from "../../src/sandbox/egress/policy.ts";
import { EgressProxy } from "../../src/sandbox/egress/proxy.ts";

const rss = async () => Number(/VmRSS:\s+(\d+)/.exec(await readFile("/proc/self/status", "utf8"))?.[1] ?? 0);

const [baseUrl, n] = [process.argv[2]!, Number(process.argv[3] ?? 16)];
const url = new URL(baseUrl);
const dir = await mkdtemp(join(tmpdir(), "egm-"));
globalThis.gc?.();
const before = await rss();
const proxy = new EgressProxy();
const body = JSON.stringify({ model: "scripted-model", stream: true, messages: [{ role: "user", content: "memory" }] });
const open = await Promise.all(
  Array.from({ length: n }, async (_, i) => {
    const socketPath = join(dir, `${i}.sock`);
    await proxy.open(`s${i}`, { socketPath, policy: egressPolicy([baseUrl], []), logFile: join(dir, `${i}.jsonl`) });
    const s = connect(socketPath);
    await new Promise<void>((resolve, reject) => {
      let buf = "";
      let tunnelled = false;
      s.on("data", (d: Buffer) => {
        buf += d.toString();
        if (!tunnelled && buf.includes("\r\n\r\n")) {
          tunnelled = true;
          buf = "";
          s.write(
            `POST ${url.pathname}/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
        } else if (tunnelled && buf.includes("[DONE]")) resolve();
      });
      s.once("error", reject);
      s.write(`CONNECT ${url.host} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    });
    return s;
  }),
);
const after = await rss();
for (const s of open) s.destroy();
await proxy.closeAll();
await rm(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ before, after })}\n`);
