/**
 * A shepherd killed (SIGKILL, by its pid) in the middle of a git step leaves nothing that the next
 * shepherd does not report or put right (issue 31, item 7): a real pi shepherd over RPC, real pi
 * sheep on the scripted model, a real repository. To kill it at an exact point, the killed
 * shepherd's PATH starts with a directory of gates: a `tmux` or `git` that, while the test's gate
 * file exists, holds one chosen call (says so in a file, with its pid) and then fails it without
 * running it; every other call runs the real program. The kill lands while the call is held.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { git, lines, status, worktreeList } from "../support/git-repo.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

type Check = { name: string; verdict: string; detail: string; fix?: string };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, look: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    assert.ok(Date.now() < deadline, `never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Where the real program is; fails loudly when it is missing. */
async function real(name: string): Promise<string> {
  const r = await execa("sh", ["-c", `command -v ${name}`], { reject: false });
  assert.equal(r.exitCode, 0, `${name} is needed on PATH`);
  return String(r.stdout).trim();
}

/**
 * A shell script standing in for `bin`: when `held` (a sh test on its arguments) is true and the
 * gate file exists, it writes its pid into `reached`, waits for the gate to go, and fails.
 */
function gateScript(bin: string, held: string, gate: string, reached: string): string {
  for (const p of [bin, gate, reached]) assert.ok(!p.includes("'"), `no quote in ${p}`);
  return [
    "#!/bin/sh",
    `if [ -e '${gate}' ] && ${held}; then`,
    `  echo $$ > '${reached}.tmp' && mv '${reached}.tmp' '${reached}'`,
    `  while [ -e '${gate}' ]; do sleep 0.05; done`,
    "  exit 1",
    "fi",
    `exec '${bin}' "$@"`,
    "",
  ].join("\n");
}

describe("a shepherd killed in a git step: the next one reports and repairs what it left", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let repo: string;
  let gates: string;
  let gate: string;
  let reached: string;
  let gatedEnv: NodeJS.ProcessEnv;
  const held: number[] = [];

  before(async () => {
    world = await e2eWorld("git-crash", { repo: { "a.txt": lines(3), "b.txt": lines(2) } });
    repo = world.cwd;
    gates = join(world.dir, "gates");
    gate = join(world.dir, "gate");
    reached = join(world.dir, "reached");
    await mkdir(gates);
    // A pane's creation: the start is past its worktree and before its record.
    const pane = `case " $* " in *" new-window "*|*" new-session "*|*" split-window "*) true;; *) false;; esac`;
    await writeFile(join(gates, "tmux"), gateScript(await real("tmux"), pane, gate, reached));
    // The `reset --quiet` that makes a worktree's index follow its branch after update-ref moved it.
    const reset = `[ $# -ge 2 ] && eval 'a=\${'$(($#-1))'} b=\${'$#'}' && [ "$a" = reset ] && [ "$b" = --quiet ]`;
    await writeFile(join(gates, "git"), gateScript(await real("git"), reset, gate, reached));
    await chmod(join(gates, "tmux"), 0o755);
    await chmod(join(gates, "git"), 0o755);
    gatedEnv = { ...world.env, PATH: `${gates}:${world.env.PATH}` };
  });

  after(async () => {
    await rm(gate, { force: true });
    for (const pid of held) for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    await world?.cleanup();
  });

  /** Runs `call` on a gated shepherd, kills the shepherd by its pid while the gated call is held, and lets the gate go. */
  async function killWhileHeld(scene: Scene, call: Record<string, unknown>, whileHeld: () => Promise<void>): Promise<void> {
    await writeFile(gate, "");
    // The prompt alone, not call(): a call waits for the tool's end, which a killed shepherd never sends.
    const accepted = await scene.shepherd.command({ type: "prompt", message: directive({ tool: { name: "shepherd", arguments: call }, afterTool: "done" }) });
    assert.equal(accepted.success, true, JSON.stringify(accepted));
    const pid = Number(await until("the gated call was reached", async () => (existsSync(reached) ? (await readFile(reached, "utf8")).trim() : undefined)));
    held.push(pid);
    await whileHeld();
    const shepherdPid = scene.shepherd.proc.pid!;
    process.kill(shepherdPid, "SIGKILL");
    await scene.shepherd.proc;
    assert.equal(alive(shepherdPid), false, "the shepherd is dead");
    await rm(gate);
    await rm(reached);
    await until("the held call ended", () => (alive(pid) ? undefined : true));
  }

  const branches = async () => (await git(repo, "branch", "--list", "--format=%(refname:short)", "shepherd/*")).split("\n").filter(Boolean);
  const doctor = async (s: Scene) => ((await s.ok({ action: "doctor" })).details as unknown as { checks: Check[] }).checks;

  it("killed during an isolated start (worktree made, no record yet): the next doctor reports it, prune removes worktree and branch", async () => {
    const first = world!.scene({ env: gatedEnv });
    assert.deepEqual(
      (await doctor(first)).filter((c) => /orphan worktree/.test(c.name)).map((c) => c.verdict),
      ["pass"],
    );
    let made: string[] = [];
    await killWhileHeld(first, { action: "start", agent: "echo", label: "cut", isolate: true }, async () => {
      made = (await worktreeList(repo)).filter((p) => p !== repo);
      assert.equal(made.length, 1, "the worktree exists when the start is cut");
      assert.equal((await branches()).length, 1, "and its branch");
    });
    const [path] = made as [string];
    const [branch] = (await branches()) as [string];
    assert.ok(existsSync(path), "the killed start left its worktree");
    const state = join(world!.agentDir, "pi-shepherd", "state.json");
    if (existsSync(state)) assert.doesNotMatch(await readFile(state, "utf8"), /"cut"/, "and no record of the sheep");

    const next = world!.scene();
    const orphans = (await doctor(next)).filter((c) => c.name === "orphan worktree");
    assert.equal(orphans.length, 1, JSON.stringify(orphans));
    assert.equal(orphans[0]!.verdict, "warn");
    assert.ok(orphans[0]!.detail.includes(path) && orphans[0]!.detail.includes(branch), orphans[0]!.detail);
    assert.match(orphans[0]!.fix ?? "", /\/shepherd prune/);

    const pruned = await next.ok({ action: "prune" });
    assert.ok(pruned.text.includes(`Removed the worktree at ${path} and its branch ${branch}, which no record knew`), pruned.text);
    assert.deepEqual(await worktreeList(repo), [repo]);
    assert.deepEqual(await branches(), []);
    assert.equal(existsSync(path), false);
    assert.deepEqual(
      (await doctor(next)).filter((c) => /orphan worktree/.test(c.name)).map((c) => c.verdict),
      ["pass"],
    );
    await next.shepherd.stop();
  });

  it("killed between sync's update-ref and its reset: the next sync repairs the index and merges, land lands, both checkouts clean", async () => {
    const first = world!.scene({ env: gatedEnv });
    const sheep = await first.start("worker", { isolate: true });
    const worktree = (await worktreeList(repo)).find((p) => p !== repo)!;
    const p = await first.prompt(
      sheep.agentId,
      directive({ rounds: [[{ name: "write", arguments: { path: "sheep.txt", content: "the sheep's\n" } }]], afterTool: "wrote" }),
    );
    assert.equal((await first.wait(p, 120)).status, "completed");
    // The person's own commit, so the sync has something to merge and commits the sheep's work first.
    await writeFile(join(repo, "a.txt"), "the person's\n");
    await git(repo, "commit", "--quiet", "-am", "person");

    await killWhileHeld(first, { action: "sync", agentId: sheep.agentId }, async () => {
      // Just as git leaves it: the branch holds sheep.txt, the index does not.
      assert.equal(await status(worktree), "D  sheep.txt\n?? sheep.txt\n");
    });
    assert.equal(await status(worktree), "D  sheep.txt\n?? sheep.txt\n", "the kill left the index behind the branch");

    const next = world!.scene();
    const synced = await next.ok({ action: "sync", agentId: sheep.agentId });
    assert.match(synced.text, /^Synced main \(\w+\) into the worktree of worker .*: .* came in\./);
    assert.equal(await status(worktree), "", "the worktree reads clean after the sync");
    assert.equal(await readFile(join(worktree, "sheep.txt"), "utf8"), "the sheep's\n");
    assert.equal(await readFile(join(worktree, "a.txt"), "utf8"), "the person's\n", "the person's commit came in");

    const landed = await next.ok({ action: "land", agentId: sheep.agentId });
    assert.match(landed.text, /fast-forward/);
    assert.equal(await readFile(join(repo, "sheep.txt"), "utf8"), "the sheep's\n");
    assert.equal(await status(repo), "");
    assert.equal(await status(worktree), "");
    await next.ok({ action: "close", agentId: sheep.agentId });
  });
});
