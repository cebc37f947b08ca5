/**
 * Who may ask for a sandbox: an agent file (a project's only for one), the start call, a delegation
 * and each of its tasks; the tool's parser takes only true or false.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAgentFile } from "../../../src/definitions/parse.ts";
import { parseToolCommand } from "../../../src/edge/command.ts";

const file = (extra: string) => `---\nname: boxed\ndescription: d\n${extra}---\nbody\n`;

describe("asking for a sandbox", () => {
  it("an agent file may say sandbox: true; only the user's own may say false", () => {
    for (const source of ["user", "project"] as const) {
      const on = parseAgentFile(file("sandbox: true\n"), "/x/boxed.md", source);
      assert.ok(on.ok);
      assert.equal(on.definition.sandbox, true);
    }
    const userOff = parseAgentFile(file("sandbox: false\n"), "/x/boxed.md", "user");
    assert.ok(userOff.ok);
    assert.equal(userOff.definition.sandbox, false);
    const projectOff = parseAgentFile(file("sandbox: false\n"), "/x/boxed.md", "project");
    assert.deepEqual(projectOff.ok ? "parsed" : projectOff.reason, '"sandbox: false" can only be set in your own agent files, not in a project\'s');
    const bad = parseAgentFile(file("sandbox: maybe\n"), "/x/boxed.md", "user");
    assert.deepEqual(bad.ok ? "parsed" : bad.reason, '"sandbox" must be true or false');
    const none = parseAgentFile(file(""), "/x/boxed.md", "user");
    assert.ok(none.ok);
    assert.equal(none.definition.sandbox, undefined);
  });

  it("start, resume, delegate and each task take sandbox as true or false", () => {
    assert.equal((parseToolCommand({ action: "start", agent: "a", sandbox: true }) as { sandbox?: boolean }).sandbox, true);
    assert.equal((parseToolCommand({ action: "start", resume: "s", sandbox: true }) as { sandbox?: boolean }).sandbox, true);
    const d = parseToolCommand({
      action: "delegate",
      tasks: [
        { agent: "a", task: "t", sandbox: true },
        { agent: "b", task: "u" },
      ],
      sandbox: false,
    }) as {
      sandbox?: boolean;
      tasks: { sandbox?: boolean }[];
    };
    assert.deepEqual([d.sandbox, d.tasks[0]!.sandbox, d.tasks[1]!.sandbox], [false, true, undefined]);
    assert.throws(
      () => parseToolCommand({ action: "delegate", tasks: [{ agent: "a", task: "t", sandbox: "yes" }] }),
      /\[invalid_params\] tasks\[0\]: "sandbox" must be true or false/,
    );
    assert.throws(() => parseToolCommand({ action: "start", agent: "a", sandbox: "on" }), /\[invalid_params\]/);
  });
});

describe("a sandboxed start on another host", () => {
  it("is that host's to sandbox: asked there with sandbox: true, and a refusal there names the host", async () => {
    const { RoutedSheepFiles } = await import("../../../src/hosts/routed-sheep-files.ts");
    const { HostTable } = await import("../../../src/hosts/table.ts");
    const { ShepherdError } = await import("../../../src/domain/errors.ts");
    const { MemoryWorld } = await import("../../support/memory-world.ts");
    const local = new MemoryWorld();
    const far = new MemoryWorld();
    const asked: (true | undefined)[] = [];
    const files = Object.create(far.files) as typeof far.files;
    files.prepare = async (req) => {
      asked.push(req.sandbox);
      throw new ShepherdError("sandbox_unavailable", "cannot start a sandboxed sheep: bubblewrap (bwrap) is not installed.");
    };
    const table = new HostTable({
      local: { runtime: local.runtime, files: local.files },
      hosts: ["gpu"],
      connect: () => ({ runtime: far.runtime, files, down: () => undefined, dir: async (p) => p ?? "/", close: async () => {} }),
      hostOf: () => undefined,
    });
    const host = new RoutedSheepFiles(table);
    const def = { name: "w", description: "d", source: "user" as const, path: "/w.md" };
    await assert.rejects(
      host.prepare({ agentId: "a_0000000001", definition: def, cwd: "/", label: "w", createdAt: new Date().toISOString(), host: "gpu", sandbox: true }),
      /\[sandbox_unavailable\] on host "gpu": cannot start a sandboxed sheep: bubblewrap \(bwrap\) is not installed/,
    );
    assert.deepEqual(asked, [true]);
  });
});

describe("a sandboxed sheep's cwd", () => {
  it("cannot be the root, refused before any file of the sheep is written", async () => {
    const { mkdtemp, readdir, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { LocalSheepFiles } = await import("../../../src/protocol/local-sheep-files.ts");
    const agentDir = await mkdtemp(join(tmpdir(), "pi-shepherd-sandbox-cwd-"));
    try {
      const host = new LocalSheepFiles({
        agentDir,
        piCommand: ["/bin/true"],
        nodePath: process.execPath,
        launcherPath: "/x/launcher.mjs",
        reportExitPath: "/x/report-exit.sh",
        sheepExtension: "/x/sheep.ts",
        env: {},
        depth: 1,
        sandbox: { settings: { default: "on" }, bwrap: async () => "/usr/bin/bwrap" },
      });
      const def = { name: "w", description: "d", source: "user" as const, path: "/w.md" };
      await assert.rejects(
        host.prepare({ agentId: "a_0000000001", definition: def, cwd: "/", label: "w", createdAt: new Date().toISOString() }),
        /\[invalid_params\] a sandboxed sheep cannot work in "\/"/,
      );
      assert.deepEqual(await readdir(agentDir), [], "nothing written");
    } finally {
      await rm(agentDir, { recursive: true, force: true });
    }
  });
});

describe("facts from the disk", () => {
  it("a secret directory that is a symlink is still a directory to hide", async () => {
    const { mkdtemp, mkdir, symlink, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { pathKind } = await import("../../../src/sandbox/facts.ts");
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sandbox-facts-"));
    try {
      await mkdir(join(dir, "real-ssh"));
      await symlink(join(dir, "real-ssh"), join(dir, ".ssh"));
      assert.equal(pathKind(join(dir, ".ssh")), "dir");
      assert.equal(pathKind(join(dir, "nothing")), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
