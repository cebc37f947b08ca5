/**
 * A real pi 1.6 run by the real launcher with PI_SHEPHERD_EGRESS_SOCKET (no sandbox needed for
 * this): its model request to the scripted model on 127.0.0.1 goes launcher's forwarder → the
 * proxy's Unix socket → the proxy → the model, and is logged; with the model not in the policy the
 * request is refused, pi gets no answer, and the refusal is logged and audited. NO_PROXY in the
 * spec (as a user's environment may carry) does not let pi go around the proxy.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import type { AuditInput } from "../../src/ports/audit.ts";
import { egressPolicy } from "../../src/sandbox/egress/policy.ts";
import { providerBaseUrls } from "../../src/sandbox/egress/provider-hosts.ts";
import { EgressProxy } from "../../src/sandbox/egress/proxy.ts";
import { writeAgentDir } from "../support/agent-dir.ts";
import { tempDir } from "../support/egress-sockets.ts";
import { repoRoot, testNode, testPiCli } from "../support/rpc-shepherd.ts";
import { startScriptedModel } from "../support/scripted-model.ts";

const launcher = join(repoRoot, "src", "launch", "launcher.mjs");

async function runPi(dir: string, agentDir: string, socketPath: string, message: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const spec = join(dir, `spec-${Date.now()}.json`);
  const env = {
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_SHEPHERD_EGRESS_SOCKET: socketPath,
    NO_PROXY: "127.0.0.1,localhost",
  };
  await writeFile(spec, JSON.stringify({ argv: [testNode, testPiCli, "--no-session", "-p", message], cwd: dir, env }), { mode: 0o600 });
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(TMUX|TMUX_PANE|HERDR_\w+|PI_SHEPHERD_\w+|HTTPS?_PROXY|https?_proxy)$/.test(k)),
  );
  const child = spawn(testNode, [launcher, spec], { env: base, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

test("real pi's model request goes through the launcher's forwarder and the egress proxy, and is logged; refused when not allowed", async (t) => {
  const model = await startScriptedModel();
  t.after(() => model.close());
  const dir = await tempDir(t);
  const agentDir = await writeAgentDir(model.baseUrl, join(dir, "agent"));
  const audit: AuditInput[] = [];
  const proxy = new EgressProxy({ audit: (e) => audit.push(e) });
  t.after(() => proxy.closeAll());

  // Allowed: the policy is the provider's base URL as pi's configuration gives it.
  const urls = await providerBaseUrls(agentDir, "scripted", "scripted-model");
  assert.deepEqual(urls, [model.baseUrl]);
  const okSocket = join(dir, "ok.sock");
  const okLog = await proxy.open("ok", { socketPath: okSocket, policy: egressPolicy(urls, []), logFile: join(dir, "ok.egress.jsonl") });
  const ok = await runPi(dir, agentDir, okSocket, "hello through the proxy");
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /ECHO: hello through the proxy/);
  assert.equal(model.log.length, 1);
  await proxy.close("ok");
  const entries = okLog.last(10);
  assert.ok(entries.length >= 1, "the model request is in the log");
  assert.ok(
    entries.every((e) => e.verdict === "allowed" && e.target === `127.0.0.1:${model.port}` && e.method === "CONNECT"),
    JSON.stringify(entries),
  );
  assert.ok(entries.reduce((n, e) => n + e.bytesDown, 0) > 0 && entries.reduce((n, e) => n + e.bytesUp, 0) > 0);

  // Refused: a policy without the model.
  const noSocket = join(dir, "no.sock");
  const noLog = await proxy.open("no", { socketPath: noSocket, policy: egressPolicy([], ["api.example.com"]), logFile: join(dir, "no.egress.jsonl") });
  const no = await runPi(dir, agentDir, noSocket, "this must not reach the model");
  assert.doesNotMatch(no.stdout, /ECHO/);
  assert.equal(model.log.length, 1, "the model saw no second request");
  assert.ok(noLog.counts().refused >= 1);
  assert.equal(noLog.counts().allowed, 0);
  assert.ok(noLog.last(10).every((e) => e.target === `127.0.0.1:${model.port}` && e.reason === "not_allowed"));
  assert.ok(audit.some((e) => e.event === "refusal" && e.action === "egress" && e.agentId === "no" && e.target === `127.0.0.1:${model.port}`));
});
