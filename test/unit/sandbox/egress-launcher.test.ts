/**
 * The launcher's egress hook: with PI_SHEPHERD_EGRESS_SOCKET in the spec it starts the forwarder in
 * its own process before pi, and pi finds the proxy variables naming it (NO_PROXY emptied, whatever
 * the spec carried). A stand-in pi makes one plain request through HTTP_PROXY; it reaches a real
 * server through the real proxy, which logs it.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { egressPolicy } from "../../../src/sandbox/egress/policy.ts";
import { EgressProxy } from "../../../src/sandbox/egress/proxy.ts";
import { targetServer, tempDir } from "../../support/egress-sockets.ts";
import { repoRoot } from "../../support/rpc-shepherd.ts";

const launcher = join(repoRoot, "src", "launch", "launcher.mjs");

for (const where of ["the package", "a remote host's flat bundle dir"] as const) {
  test(`a spec with PI_SHEPHERD_EGRESS_SOCKET gives pi HTTP(S)_PROXY to a forwarder that reaches the proxy (launcher in ${where})`, async (t) => {
    const { port } = await targetServer(t);
    const dir = await tempDir(t);
    const proxy = new EgressProxy();
    t.after(() => proxy.closeAll());
    const socketPath = join(dir, "a1.sock");
    const log = await proxy.open("a1", { socketPath, policy: egressPolicy([`http://127.0.0.1:${port}/v1`], []), logFile: join(dir, "a1.jsonl") });
    const out = join(dir, "out.json");
    const fakePi = join(dir, "fake-pi.mjs");
    await writeFile(
      fakePi,
      [
        'import { request } from "node:http";',
        'import { writeFileSync } from "node:fs";',
        "const proxy = new URL(process.env.HTTP_PROXY);",
        `const url = "http://127.0.0.1:${port}/v1/chat";`,
        "request({ host: proxy.hostname, port: proxy.port, path: url, headers: { host: new URL(url).host } }, (res) => {",
        '  let text = "";',
        "  res.on('data', (d) => { text += d; });",
        `  res.on('end', () => { writeFileSync(${JSON.stringify(out)}, JSON.stringify({ text, env: { HTTP_PROXY: process.env.HTTP_PROXY, HTTPS_PROXY: process.env.HTTPS_PROXY, NO_PROXY: process.env.NO_PROXY } })); process.exit(0); });`,
        "}).end();",
      ].join("\n"),
    );
    const spec = join(dir, "spec.json");
    await writeFile(
      spec,
      JSON.stringify({ argv: [process.execPath, fakePi], cwd: dir, env: { PI_SHEPHERD_EGRESS_SOCKET: socketPath, NO_PROXY: "127.0.0.1,localhost" } }),
      { mode: 0o600 },
    );
    let launcherPath = launcher;
    if (where !== "the package") {
      // As src/remote/bundle.ts ships them: the launcher and egress-forwarder.mjs side by side, nothing else.
      const flat = join(dir, "bundle");
      await mkdir(flat);
      await copyFile(launcher, join(flat, "launcher.mjs"));
      await copyFile(join(repoRoot, "src", "sandbox", "egress", "forwarder.mjs"), join(flat, "egress-forwarder.mjs"));
      launcherPath = join(flat, "launcher.mjs");
    }
    const child = spawn(process.execPath, [launcherPath, spec], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    assert.equal(code, 0, stderr);
    const said = JSON.parse(await readFile(out, "utf8")) as { text: string; env: Record<string, string> };
    assert.equal(said.text, "hello /v1/chat");
    assert.match(said.env.HTTP_PROXY!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(said.env.HTTPS_PROXY, said.env.HTTP_PROXY);
    assert.equal(said.env.NO_PROXY, "");
    await proxy.close("a1");
    assert.deepEqual(
      log.last(5).map((e) => `${e.method} ${e.target} ${e.verdict}`),
      [`GET 127.0.0.1:${port} allowed`],
    );
  });
}
