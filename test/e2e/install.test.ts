/**
 * Installing pi-shepherd as a pi package, the ways README names, then using it from a real pi:
 * the package must load with no warning at all and its sheep must run from the installed copy.
 *
 * What a user gets is a clone of the repository. A real `git clone` of this working tree would
 * test the last commit, not the code under test, so the test builds the clone's content from the
 * working tree: every file git tracks or would track (`git ls-files --cached --others
 * --exclude-standard`), nothing it ignores (no node_modules). For the git path the same content
 * is committed to a throwaway repository and served over HTTP on loopback, so pi runs its own
 * `git clone` and dependency install exactly as it does for a remote.
 */
import assert from "node:assert/strict";
import { execa } from "execa";
import { existsSync } from "node:fs";
import { cp, lstat, mkdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative, resolve, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { makeAgentDir, shepherdEnv } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { node22, piCli, repoRoot } from "../support/rpc-shepherd.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

/** The registry is reachable, but the cache usually has everything: keep the installs fast. */
const NPM_FAST = { npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };

async function copyWorkingTree(to: string): Promise<void> {
  const { stdout } = await execa("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot });
  for (const file of stdout.split("\0").filter(Boolean)) {
    const from = join(repoRoot, file);
    if (!existsSync(from)) continue; // deleted in the working tree, not yet in the index
    // Never a node_modules, and never a symlink: a worktree's node_modules may be a link to a
    // shared install, and `npm ci` in the checkout would empty whatever it points to.
    if (file.split("/").includes("node_modules") || (await lstat(from)).isSymbolicLink()) continue;
    await mkdir(join(to, file, ".."), { recursive: true });
    await cp(from, join(to, file), { preserveTimestamps: true });
  }
}

/** Git's "dumb" HTTP protocol is plain static files, so a few lines serve a bare repository. */
async function serveStatic(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const path = resolve(root, "." + decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    if (req.method !== "GET" || (path !== root && !path.startsWith(root + sep))) return void res.writeHead(404).end();
    try {
      const body = await readFile(path);
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe("installing pi-shepherd as a pi package", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let dir: string;
  let checkout: string;
  let t: PrivateTmux;
  let model: ScriptedModel;

  const pi = (args: string[], agentDir: string, cwd: string) =>
    execa(node22, [piCli, ...args], {
      cwd,
      env: { ...shepherdEnv(agentDir, { PI_SHEPHERD_RUNTIME: "tmux", PI_SHEPHERD_TMUX_SOCKET: t.socket }), ...NPM_FAST },
      extendEnv: false,
      stdin: "ignore",
      reject: false,
      timeout: 300_000,
    });

  /**
   * One `pi -p` whose model delegates a task: the installed extension starts a sheep from its
   * own copy of the package, the sheep answers, and the answer reaches the model as the result.
   */
  async function delegateThroughInstalledPackage(agentDir: string, tag: string) {
    const work = join(dir, `work-${tag}`);
    await mkdir(work);
    const exact = `answer from the ${tag} install: "quoted" ü 🐑`;
    const from = model.log.length;
    const run = await pi(
      [
        "-p",
        "--no-session",
        directive({ tool: { name: "shepherd", arguments: { action: "delegate", agent: "echo", task: directive({ reply: exact, tag }) } } }),
      ],
      agentDir,
      work,
    );
    assert.equal(run.exitCode, 0, `pi -p failed: ${run.stderr}`);
    assert.equal(run.stderr, "", "pi printed nothing on stderr: no load error, no warning");
    const requests = model.log.slice(from);
    assert.ok(requests[0]!.toolNames.includes("shepherd"), "the installed package registered the shepherd tool");
    assert.ok(
      requests.some((r) => r.tag === tag),
      "the sheep asked the model",
    );
    const followup = requests.find((r) => r.kind === "tool-followup");
    assert.equal(followup?.replyText, `TOOL_RESULT: ${exact}`, "the sheep's exact answer came back as the tool result");
    assert.equal(run.stdout.trim(), `TOOL_RESULT: ${exact}`);
    assert.deepEqual((await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n"), [t.userPane], "the delegated sheep was closed");
  }

  const packagesOf = async (agentDir: string) => (JSON.parse(await readFile(join(agentDir, "settings.json"), "utf8")) as { packages?: unknown[] }).packages;

  before(async () => {
    // Each install gets an agent dir of its own (pi install writes its settings), made beside the world's.
    world = await e2eWorld("install");
    ({ dir, tmux: t, model } = world);
    checkout = join(dir, "pi-shepherd");
    await copyWorkingTree(checkout);
  });

  after(() => world?.cleanup());

  it("local path: npm ci --omit=dev in the checkout, then pi install <path>", async () => {
    const ci = await execa("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: checkout, reject: false });
    assert.equal(ci.exitCode, 0, ci.stderr);
    const agentDir = await makeAgentDir(join(dir, "agent-local"), model.baseUrl);
    const install = await pi(["install", checkout], agentDir, dir);
    assert.equal(install.exitCode, 0, install.stderr);
    assert.equal(install.stderr, "");
    // pi records a local package relative to the agent directory.
    assert.deepEqual(
      ((await packagesOf(agentDir)) ?? []).map((p) => resolve(agentDir, String(p))),
      [checkout],
    );
    await delegateThroughInstalledPackage(agentDir, "LOCAL");
    for (const hostProvided of ["@earendil-works/pi-coding-agent", "@sinclair/typebox"]) {
      assert.equal(existsSync(join(checkout, "node_modules", hostProvided)), false, `${hostProvided} comes from pi, not from the package`);
    }
  });

  it("git: pi install git:<url> clones the repository and installs its dependencies itself", async () => {
    const repo = join(dir, "repo");
    await cp(checkout, repo, { recursive: true, filter: (p) => !relative(checkout, p).startsWith("node_modules") });
    const git = (args: string[], cwd: string) =>
      execa("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false", ...args], { cwd });
    await git(["init", "-q", "-b", "main"], repo);
    await git(["add", "-A"], repo);
    await git(["commit", "-q", "-m", "snapshot"], repo);
    const served = join(dir, "served");
    await mkdir(join(served, "shepherd"), { recursive: true });
    await git(["clone", "-q", "--bare", "--no-local", repo, join(served, "shepherd", "pi-shepherd.git")], dir);
    await git(["update-server-info"], join(served, "shepherd", "pi-shepherd.git"));
    const http = await serveStatic(served);
    world!.defer(() => http.close());

    const agentDir = await makeAgentDir(join(dir, "agent-git"), model.baseUrl);
    const source = `git:${http.url}/shepherd/pi-shepherd.git`;
    const install = await pi(["install", source], agentDir, dir);
    assert.equal(install.exitCode, 0, install.stderr);
    assert.deepEqual(await packagesOf(agentDir), [source]);
    const installed = join(agentDir, "git", "127.0.0.1", "shepherd", "pi-shepherd");
    assert.ok(existsSync(join(installed, "node_modules", "execa")), "pi installed the production dependencies");
    await delegateThroughInstalledPackage(agentDir, "GIT");
    assert.equal(existsSync(join(installed, "node_modules", "@sinclair", "typebox")), false, "no copy of a host-provided package");
  });
});
