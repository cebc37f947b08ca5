/**
 * The program a remote host runs for its shepherd: `node <bin>/<hash>/agent.mjs`, bundled with
 * everything it needs (src/remote/bundle.ts). It speaks the agent protocol on stdin and stdout;
 * stderr is for the person. It ends when its stdin ends; the sheep it started live on in their
 * multiplexer, whose server is not its child.
 */
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { PROTOCOL_VERSION } from "../rpc/call.ts";
import { LineSplitter } from "../rpc/lines.ts";
import { AgentServer } from "./serve.ts";
import { sheepSideIn } from "./setup.ts";

const here = dirname(fileURLToPath(import.meta.url));
const bundle = /^[0-9a-f]{8,64}$/.test(basename(here)) ? basename(here) : "dev";

const write = (line: string) => {
  process.stdout.write(line);
};
// The shepherd is gone: nobody reads what this process would say.
process.stdout.on("error", () => process.exit(0));
// A stray rejection (a watcher's, a late answer's) is told to the person, never the end of every sheep's channel.
process.on("unhandledRejection", (e) => {
  process.stderr.write(`pi-shepherd agent: ${e instanceof Error ? e.message : String(e)}\n`);
});

// On Linux a pipe's writes are synchronous (nothing is left unsent, a slow link blocks the write instead); elsewhere this bounds it.
const server = new AgentServer({ write, side: sheepSideIn(here), backlog: () => process.stdout.writableLength });
write(`${JSON.stringify({ hello: { protocol: PROTOCOL_VERSION, bundle, pid: process.pid, node: process.version } })}\n`);

const splitter = new LineSplitter();
process.stdin.on("data", (chunk: Buffer) => {
  for (const ev of splitter.push(chunk)) {
    if ("overflow" in ev) server.overflow();
    else server.line(ev.line);
  }
});
process.stdin.on("end", () => {
  void server.end().then(() => process.exit(0));
});
