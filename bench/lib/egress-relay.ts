/**
 * Run by bench/egress-cpu.ts as its own process: the relay whose CPU is measured, alone in its
 * process so its time is its own. `proxy <socket> <port>`: the real egress proxy, one sheep allowed
 * 127.0.0.1:<port>. `bare <socket> <port>`: the least a relay can do, a node server on the same kind
 * of socket that answers a CONNECT and pipes both ways. On the parent's "start" it notes its CPU
 * (process.cpuUsage), on "stop" it sends the microseconds spent since.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { egressPolicy } from "../../src/sandbox/egress/policy.ts";
import { EgressProxy } from "../../src/sandbox/egress/proxy.ts";

const [mode, socketPath, port] = [process.argv[2], process.argv[3]!, Number(process.argv[4])];
const dir = await mkdtemp(join(tmpdir(), "egc-"));
let close: () => Promise<void>;
if (mode === "proxy") {
  const proxy = new EgressProxy();
  await proxy.open("bench", { socketPath, policy: egressPolicy([`http://127.0.0.1:${port}`], []), logFile: join(dir, "egress.jsonl") });
  close = () => proxy.closeAll();
} else {
  const server = createServer((client) => {
    client.on("error", () => client.destroy());
    let head = Buffer.alloc(0);
    const onHead = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      if (!head.includes("\r\n\r\n")) return;
      client.off("data", onHead);
      client.pause();
      const up = connect({ host: "127.0.0.1", port }, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        client.pipe(up);
        up.pipe(client);
      });
      const end = () => {
        client.destroy();
        up.destroy();
      };
      client.on("error", end);
      up.on("error", end);
      client.on("close", end);
      up.on("close", end);
    };
    client.on("data", onHead);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
}
let start = process.cpuUsage();
process.on("message", async (m: string) => {
  if (m === "start") start = process.cpuUsage();
  else if (m === "stop") {
    const d = process.cpuUsage(start);
    process.send?.({ cpuUs: d.user + d.system, sysUs: d.system });
  } else if (m === "exit") {
    await close();
    await rm(dir, { recursive: true, force: true });
    process.disconnect();
  }
});
process.send?.("ready");
