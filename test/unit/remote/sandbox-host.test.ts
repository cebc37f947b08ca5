/**
 * A sandboxed sheep on another host (issue 33), without ssh: the real agent bundle over pipes,
 * its init carrying the user's sandbox setting. A host without bubblewrap refuses the start with
 * [sandbox_unavailable] naming the host, what is missing and how to install it, and writes nothing
 * of the sheep; a host with it prepares a bubblewrap pane command whose egress socket the agent
 * serves there, and closes when the agent ends.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isShepherdError } from "../../../src/domain/errors.ts";
import { RoutedSheepFiles } from "../../../src/hosts/routed-sheep-files.ts";
import { HostTable } from "../../../src/hosts/table.ts";
import type { PrepareRequest } from "../../../src/ports/sheep-files.ts";
import { remotePorts } from "../../../src/remote/rpc/ports.ts";
import { checkBwrap } from "../../../src/sandbox/probe.ts";
import { writeAgentDir } from "../../support/agent-dir.ts";
import { initAgent, type LocalAgent, spawnLocalAgent, testInit } from "../../support/local-agent.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const request = (agentId: string, cwd: string): PrepareRequest => ({
  agentId,
  definition: { name: "echo", description: "", source: "user", path: "/echo.md" },
  model: "scripted/scripted-model",
  cwd,
  label: "boxed",
  createdAt: new Date().toISOString(),
  sandbox: true,
});

/** The router with one host, "gpu", served by the agent over pipes. */
function routedTo(agent: LocalAgent): RoutedSheepFiles {
  const local = new MemoryWorld();
  const ports = remotePorts(agent.client, { host: "gpu", runtime: "tmux" });
  const table = new HostTable({
    local: { runtime: local.runtime, files: local.files },
    hosts: ["gpu"],
    connect: () => ({ ...ports, down: () => undefined, close: async () => {} }),
    hostOf: () => undefined,
  });
  return new RoutedSheepFiles(table);
}

describe("a sandboxed sheep on a host", { timeout: 60_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sandbox-host-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("init refuses a sandbox setting the settings file would refuse", async () => {
    const agent = await spawnLocalAgent();
    try {
      await assert.rejects(
        initAgent(agent, testInit(join(dir, "bad-agent"), { sandbox: { default: "maybe" } as never })),
        (e) => isShepherdError(e, "invalid_params") && /sandbox must be "default" must be "off" or "on"/.test(e.message),
      );
    } finally {
      await agent.close();
    }
  });

  it("a host without bubblewrap: [sandbox_unavailable] naming the host, what is missing and how to install it; nothing of the sheep is written", async () => {
    // The host's PATH has a shell and nothing else: no bwrap there.
    const bin = join(dir, "bare-bin");
    await mkdir(bin);
    await symlink("/bin/sh", join(bin, "sh"));
    const agentDir = await writeAgentDir("http://127.0.0.1:9", join(dir, "bare-agent"));
    const agent = await spawnLocalAgent({ env: { PATH: bin, HOME: dir } });
    try {
      await initAgent(agent, testInit(agentDir, { sandbox: { default: "off" } }));
      const routed = routedTo(agent);
      await assert.rejects(routed.prepare({ ...request("a_nobwrap001", dir), host: "gpu" }), (e) => {
        assert.ok(isShepherdError(e, "sandbox_unavailable"), String(e));
        assert.match(e.message, /^\[sandbox_unavailable\] on host "gpu": cannot start a sandboxed sheep: bubblewrap \(bwrap\) is not installed/);
        assert.match(e.message, /apt-get install bubblewrap/);
        assert.match(e.message, /does not run unsandboxed instead/);
        return true;
      });
      // Refused before anything was written: no directory, no spec, no card to run it from.
      assert.equal(existsSync(join(agentDir, "pi-shepherd", "sheep", "a_nobwrap001")), false);
      assert.equal(existsSync(join(agentDir, "pi-shepherd", "cards", "a_nobwrap001.json")), false);
      // A user's "on" holds there too: a start that did not ask is refused the same, never run plain.
    } finally {
      await agent.close();
    }
    const strict = await spawnLocalAgent({ env: { PATH: bin, HOME: dir } });
    try {
      await initAgent(strict, testInit(agentDir, { sandbox: { default: "on" } }));
      const { sandbox: _asked, ...plain } = request("a_nobwrap002", dir);
      await assert.rejects(
        routedTo(strict).prepare({ ...plain, host: "gpu" }),
        (e) => isShepherdError(e, "sandbox_unavailable") && /on host "gpu"/.test(e.message),
      );
      assert.equal(existsSync(join(agentDir, "pi-shepherd", "sheep", "a_nobwrap002")), false);
    } finally {
      await strict.close();
    }
  });

  it("a host with bubblewrap: the pane runs bwrap there, the agent serves the sheep's egress socket there and closes it as it ends", async (t) => {
    if (!(await checkBwrap()).ok) {
      t.skip("bubblewrap cannot make a sandbox on this machine");
      return;
    }
    const agentDir = await writeAgentDir("http://127.0.0.1:9", join(dir, "boxed-agent"));
    const cwd = join(dir, "work");
    await mkdir(cwd);
    const agent = await spawnLocalAgent();
    let socket = "";
    try {
      await initAgent(agent, testInit(agentDir, { sandbox: { allowNetwork: ["example.org"] } }));
      const prepared = await routedTo(agent).prepare({ ...request("a_boxed00001", cwd), host: "gpu" });
      assert.equal(prepared.sandboxed, true);
      const argv = prepared.command.argv;
      assert.equal(argv[0], "/bin/sh");
      // The seccomp program is the host's own file, in its state dir; then bubblewrap.
      assert.match(argv[4] ?? "", new RegExp(`^${join(agentDir, "pi-shepherd", "sandbox")}/seccomp-[0-9a-f]+\\.bpf$`), JSON.stringify(argv.slice(0, 6)));
      assert.ok(existsSync(argv[4]!), "written there before the pane starts");
      assert.match(argv[5] ?? "", /(^|\/)bwrap$/, JSON.stringify(argv.slice(0, 6)));
      assert.ok(argv.includes("--unshare-net"), "no network of its own there");
      const egressDir = join(agentDir, "pi-shepherd", "egress", "a_boxed00001");
      const bound = argv.indexOf(egressDir);
      assert.ok(bound > 0 && argv[bound - 1] === "--bind", "the host's egress directory is bound into the sandbox");
      socket = join(egressDir, "egress.sock");
      assert.ok((await stat(socket)).isSocket(), "the agent serves the sheep's socket there");
    } finally {
      await agent.close();
    }
    assert.equal(existsSync(socket), false, "the agent closed its proxy as it ended");
  });
});
