/**
 * The bundle's deploy script run as on a host, but by this machine's sh (the remote line is a
 * POSIX shell line either way): a fresh deploy is 0700/0600, and a bundle dir found complete is
 * used only when it is the ssh user's own (modes tightened; another owner, or a link in place of a
 * file, refused), so nobody else's files become the agent a shepherd starts.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmod, chown, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { type DeployBundle, deployBundle, type RemoteExec } from "../../../src/remote/link/deploy.ts";

const exec: RemoteExec = async (line, stdin) => {
  const r = await execa("sh", ["-c", line], { input: stdin, reject: false });
  return { exitCode: r.exitCode ?? 1, stdout: String(r.stdout), stderr: String(r.stderr) };
};
const content = "console.log('agent');\n";
const bundle: DeployBundle = { hash: "0123456789abcdef", files: [{ name: "agent.mjs", content, sha256: createHash("sha256").update(content).digest("hex") }] };
const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe("remote deploy", () => {
  let root: string;
  let agentDir: string;
  let dir: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-deploy-"));
    agentDir = join(root, "agent");
    dir = join(agentDir, "pi-shepherd", "bin", bundle.hash);
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const deploy = () => deployBundle(exec, { node: process.execPath, agentDir, bundle });

  it("writes the bundle 0700 / 0600, and uses a complete dir as it is", async () => {
    assert.deepEqual((await deploy()).written, ["agent.mjs"]);
    assert.equal(await mode(dir), 0o700);
    assert.equal(await mode(join(dir, "agent.mjs")), 0o600);
    assert.deepEqual((await deploy()).written, [], "complete: nothing written again");
  });

  it("a complete dir whose modes were loosened is tightened before it is used", async () => {
    await chmod(dir, 0o777);
    await chmod(join(dir, "agent.mjs"), 0o644);
    await chmod(join(agentDir, "pi-shepherd", "bin"), 0o755);
    assert.deepEqual((await deploy()).written, []);
    assert.equal(await mode(dir), 0o700);
    assert.equal(await mode(join(agentDir, "pi-shepherd", "bin")), 0o700);
    assert.equal(await mode(join(dir, "agent.mjs")), 0o600);
  });

  it("a link in place of a file, with the right content where it points, is refused", async () => {
    const elsewhere = join(root, "planted.mjs");
    await writeFile(elsewhere, content);
    await unlink(join(dir, "agent.mjs"));
    await symlink(elsewhere, join(dir, "agent.mjs"));
    await assert.rejects(deploy(), /\[start_failed\] .*agent\.mjs is not a plain file \(a link is refused\)/);
    await unlink(join(dir, "agent.mjs"));
    await writeFile(join(dir, "agent.mjs"), content, { mode: 0o600 });
  });

  it("a complete dir of another owner is refused, however right its files", async () => {
    assert.equal(process.getuid?.(), 0, "the test gives the dir to another uid, which needs root (CI's container is)");
    await chown(dir, 4242, 4242);
    try {
      await assert.rejects(deploy(), /\[start_failed\] .*belongs to uid 4242/);
    } finally {
      await chown(dir, 0, 0);
    }
    assert.equal(await readFile(join(dir, "agent.mjs"), "utf8"), content);
  });
});
