import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAgentFile } from "../../../src/definitions/parse.ts";
import { HostTable } from "../../../src/hosts/table.ts";
import { DEFAULT_SETTINGS, hostsProblem } from "../../../src/settings.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { hostOf, placeOn } from "../../../src/context/host-place.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

function ctx(asked: (string | undefined)[]): DispatchContext {
  const w = new MemoryWorld();
  const hosts = new HostTable({
    local: { runtime: w.runtime, files: w.files },
    hosts: ["gpu"],
    connect: () => ({
      runtime: w.runtime,
      files: w.files,
      down: () => undefined,
      close: async () => {},
      dir: async (p) => {
        asked.push(p);
        return p === undefined ? "/home/me" : p.startsWith("/") ? p : `/home/me/${p}`;
      },
    }),
    hostOf: () => undefined,
  });
  return {
    shepherd: undefined as never,
    settings: { ...DEFAULT_SETTINGS, hosts: { gpu: { ssh: "me@gpu", cwd: "/srv/checkout" } } },
    cwd: process.cwd(),
    agentDir: "/nowhere",
    bundledDir: "/nowhere",
    hosts,
    trust: { hasUI: false, confirm: async () => false, isProjectTrusted: () => false },
  };
}

describe("where a sheep runs", () => {
  it("a remote cwd is a path on the host, under its cwd setting, checked there; never the shepherd's own", async () => {
    const asked: (string | undefined)[] = [];
    const c = ctx(asked);
    assert.deepEqual(await placeOn(c, "gpu", undefined), { host: "gpu", cwd: "/srv/checkout" });
    assert.deepEqual(await placeOn(c, "gpu", "sub"), { host: "gpu", cwd: "/srv/checkout/sub" });
    assert.deepEqual(await placeOn(c, "gpu", "/abs"), { host: "gpu", cwd: "/abs" });
    assert.deepEqual(asked, ["/srv/checkout", "/srv/checkout/sub", "/abs"]);
    assert.equal((await placeOn(c, undefined, undefined)).cwd, process.cwd());
  });

  it("an unknown host is [host_unknown] with the names there are; local is this machine", async () => {
    const c = ctx([]);
    await assert.rejects(placeOn(c, "nope", undefined), /^ShepherdError: \[host_unknown\] no host is called "nope"; the hosts are: local, gpu\./);
    assert.equal(hostOf("local", "gpu"), undefined, "the call's local wins over the agent file's host");
    assert.equal(hostOf(undefined, "gpu"), "gpu");
    assert.equal(hostOf(undefined, undefined), undefined);
  });

  it("host: in an agent file is the user's alone", () => {
    const text = "---\nname: far\ndescription: runs far\nhost: gpu\n---\nwork\n";
    const user = parseAgentFile(text, "/u/far.md", "user");
    assert.ok(user.ok && user.definition.host === "gpu");
    const project = parseAgentFile(text, "/p/far.md", "project");
    assert.ok(!project.ok && /only be set in your own agent files/.test(project.reason));
    const bad = parseAgentFile(text.replace("gpu", "Bad Host"), "/u/far.md", "user");
    assert.ok(!bad.ok);
  });

  it("the hosts setting refuses what would not be a safe host", () => {
    assert.equal(hostsProblem({ gpu: { ssh: "me@gpu", sshOptions: ["-o", "ProxyJump=b"] } }), undefined);
    assert.match(hostsProblem({ local: { ssh: "x" } })!, /always means this machine/);
    assert.match(hostsProblem({ "Has Space": { ssh: "x" } })!, /is not 1-32/);
    assert.match(hostsProblem({ gpu: { ssh: "-oProxyCommand=touch /tmp/x" } })!, /"ssh" is not valid/);
    assert.match(hostsProblem({ gpu: { ssh: "a b" } })!, /"ssh" is not valid/);
    assert.match(hostsProblem({ gpu: { ssh: "x", shell: "sh" } })!, /unknown key "shell"/);
    assert.match(hostsProblem({ gpu: {} })!, /needs "ssh"/);
  });
});
