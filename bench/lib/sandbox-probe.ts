/**
 * A model request timed from inside a sheep (issue 33's "a model request through the proxy"): a
 * small script the sheep runs with its bash tool, n streamed chat requests to the scripted model,
 * each on a new connection, the first two not counted. In a sandboxed sheep each goes the way pi's
 * goes: a CONNECT to HTTP_PROXY (the launcher's forwarder in the sandbox) → the proxy's Unix socket →
 * the shepherd's proxy → the model. In an unsandboxed sheep each goes straight to the model.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

const SCRIPT = `const http = require("node:http");
const [base, n, via] = [new URL(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const proxy = via === "proxy" ? new URL(process.env.HTTP_PROXY) : undefined;
const body = JSON.stringify({ model: "scripted-model", stream: true, messages: [{ role: "user", content: "bench sandbox probe" }] });
const tunnel = () => new Promise((res, rej) => {
  const r = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: base.host, agent: false });
  r.once("connect", (m, s) => (m.statusCode === 200 ? res(s) : rej(new Error("CONNECT " + m.statusCode))));
  r.once("error", rej);
  r.end();
});
async function one() {
  const sock = proxy ? await tunnel() : undefined;
  await new Promise((res, rej) => {
    const o = { host: base.hostname, port: base.port, method: "POST", path: base.pathname + "/chat/completions",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: "Bearer x" } };
    // node uses createConnection only without an agent (agent: false makes one): a new connection either way.
    if (sock) o.createConnection = () => sock;
    else o.agent = false;
    const req = http.request(o, (m) => { m.resume(); m.once("end", res); m.once("error", rej); });
    req.once("error", rej);
    req.end(body);
  });
}
(async () => {
  const ms = [];
  for (let i = 0; i < n + 2; i++) {
    const t = performance.now();
    await one();
    if (i >= 2) ms.push(Math.round((performance.now() - t) * 100) / 100);
  }
  console.log("PROBE " + JSON.stringify(ms));
})().catch((e) => { console.log("PROBE-FAILED " + via + " " + (process.env.HTTP_PROXY || "no proxy") + " " + base.host + ": " + e.message); process.exit(1); });
`;

/** Writes the script into the sheeps' cwd (a sandboxed sheep reads its cwd); returns its path. */
export async function writeProbe(dir: string): Promise<string> {
  const path = join(dir, "bench-egress-probe.cjs");
  await writeFile(path, SCRIPT);
  return path;
}

/** The bash command a sheep runs: the node that runs the bench (readable inside the sandbox as every file of the root). */
export function probeCommand(path: string, baseUrl: string, n: number, via: "proxy" | "direct"): string {
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  return `${q(process.execPath)} ${q(path)} ${q(baseUrl)} ${n} ${via}`;
}

/** The samples the script printed, from the tool result the model saw. */
export function probeSamples(toolText: string): number[] {
  const m = /^PROBE (\[.*\])$/m.exec(toolText);
  if (!m) throw new Error(`the sandbox bench's request probe failed: ${toolText.slice(0, 500)}`);
  return JSON.parse(m[1]!) as number[];
}
