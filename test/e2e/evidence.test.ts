/**
 * Evidence, not claims, with real pi sheep on the scripted model in real git repositories made
 * by the test: the sheep call pi's own write, edit and bash tools, and every result shows exactly
 * what they changed. Isolated sheep work in worktrees of their own; land brings their work in
 * only when nothing can be lost. The shepherd runs as a person runs pi outside tmux.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Evidence, WaitItem } from "../../src/ports/types.ts";
import type { FileChange, Worktree } from "../../src/ports/workspace.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { repoRoot } from "../support/rpc-shepherd.ts";
import { git, lines, status, worktreeList, writeFiles } from "../support/git-repo.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";
import type { PrivateSocket } from "../support/tmux-server.ts";

type Call = { name: string; arguments: unknown };
const write = (path: string, content: string): Call => ({ name: "write", arguments: { path, content } });
const edit = (path: string, oldText: string, newText: string): Call => ({ name: "edit", arguments: { path, edits: [{ oldText, newText }] } });
const bash = (command: string): Call => ({ name: "bash", arguments: { command } });
/** A prompt that makes the sheep run these tool calls, one round after another, then answer. */
const work = (rounds: Call[][], reply: string) => directive({ rounds, afterTool: reply });

// The result shapes are the core's own: what travels over RPC is what the tool returned.
type Result = Pick<WaitItem, "promptId" | "status" | "text" | "error" | "evidence" | "evidenceError">;

const changes = (e: Evidence | undefined) => e?.files.map((f) => [f.path, f.status, f.insertions, f.deletions]);

describe("evidence and worktrees with real pi sheep", { timeout: 900_000 }, () => {
  let world: E2eWorld<"socket"> | undefined;
  let dir: string;
  let repo: string;
  let sock: PrivateSocket;
  let scene: Scene;

  const ok = (args: unknown) => scene.ok(args);
  const start = async (label: string, extra: Record<string, unknown> = {}) => {
    const r = await ok({ action: "start", agent: "echo", label, ...extra });
    return { ...(r.details.agent as { agentId: string; cwd: string; worktree?: Worktree }), text: r.text };
  };
  const ask = async (agentId: string, message: string): Promise<Result & { waitText: string }> => {
    const promptId = await scene.prompt(agentId, message);
    const r = await ok({ action: "wait", promptId, timeout: 120 });
    return { ...(r.details.results as Result[])[0]!, waitText: r.text };
  };

  before(async () => {
    // Spaces and unicode in the user's repository path: nothing may split or mangle it.
    world = await e2eWorld("evidence", {
      tmux: "socket",
      work: "user repo ü",
      repo: { "a.txt": lines(3), "b.txt": lines(4), "shared.txt": lines(5), ".gitignore": "*.log\n" },
    });
    ({ dir, tmux: sock, cwd: repo } = world);
    assert.equal(world.env.TMUX, undefined, "outside tmux, as a person runs pi");
    scene = world.scene();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("a sheep in the user's checkout: each result lists exactly the changes of its own prompt", async () => {
    const sheep = await start("shared");
    assert.equal(sheep.worktree, undefined);
    const first = await ask(
      sheep.agentId,
      work([[write("new.txt", "one\ntwo\n")], [edit("a.txt", "line 2", "changed")], [bash("rm b.txt && echo noise > build.log")]], "done 1"),
    );
    assert.deepEqual([first.status, first.text], ["completed", "done 1"], first.error);
    assert.deepEqual(changes(first.evidence), [
      ["a.txt", "modified", 1, 1],
      ["b.txt", "deleted", 0, 4],
      ["new.txt", "added", 2, 0],
    ]);
    assert.deepEqual([first.evidence!.insertions, first.evidence!.deletions, first.evidence!.truncated, first.evidence!.shared], [3, 5, false, true]);
    assert.equal(first.evidence!.baseline.commit, (await git(repo, "rev-parse", "HEAD")).trim());
    assert.match(first.waitText, /Evidence: \+3 −5 in 3 files during this prompt/);
    assert.match(first.waitText, /This sheep works in your checkout, not a worktree of its own/);
    assert.match(first.waitText, /^-line 2\n\+changed$/m, "the patch is inline");
    assert.doesNotMatch(first.evidence!.patch, /build\.log/, "ignored files are left out");
    assert.equal(await readFile(first.evidence!.patchPath, "utf8"), first.evidence!.patch);
    assert.equal((await stat(first.evidence!.patchPath)).mode & 0o777, 0o600);

    const second = await ask(sheep.agentId, work([[edit("new.txt", "two", "three")]], "done 2"));
    assert.deepEqual(changes(second.evidence), [["new.txt", "modified", 1, 1]], "only the second prompt's own change");

    const diff = await ok({ action: "diff", target: "shared" });
    assert.equal((diff.details as { promptId: string }).promptId, second.promptId);
    assert.match(diff.text, /^Evidence of shared \(a_\w+\), prompt p_\w+:\nEvidence: \+1 −1 in 1 file/);
    const notices = await scene.shepherd.slash("/shepherd diff shared --stat");
    assert.equal(notices.length, 1);
    assert.match(notices[0]!.text, /modified {3}new\.txt \+1 −1\nThis sheep works in your checkout[^\n]*\nPatch: \/.*\.patch$/);

    await ok({ action: "close", agentId: sheep.agentId });
    assert.equal(existsSync(first.evidence!.patchPath), true, "the patch outlives the sheep");
    // The test made these changes through the sheep; put the checkout back for the next tests.
    await git(repo, "checkout", "--quiet", "--", ".");
    await rm(join(repo, "new.txt"));
    await rm(join(repo, "build.log"));
    assert.equal(await status(repo), "");
  });

  it("a sheep outside git gets no evidence and no error", async () => {
    const plain = join(dir, "plain");
    await mkdir(plain);
    const sheep = await start("plain", { cwd: plain });
    const r = await ask(sheep.agentId, work([[write("x.txt", "x\n")]], "wrote"));
    assert.equal(r.status, "completed");
    assert.equal(r.evidence, undefined);
    assert.equal(r.evidenceError, undefined);
    await scene.fails({ action: "diff", target: "plain" }, /^\[no_evidence\] .*not in a git working tree/);
    await scene.fails({ action: "start", agent: "echo", label: "nope", cwd: plain, isolate: true }, /^\[not_a_repository\] isolate needs a git repository/);
    await ok({ action: "close", agentId: sheep.agentId });
  });

  let one: { agentId: string; worktree?: Worktree };
  let two: { agentId: string; worktree?: Worktree };

  it("isolated sheep edit the same file in worktrees of their own; the user's checkout never sees it", async () => {
    await writeFiles(repo, { "scratch.txt": "the person's own, uncommitted\n" });
    const s1 = await start("one", { isolate: true });
    const s2 = await start("two", { isolate: true });
    one = s1;
    two = s2;
    for (const s of [s1, s2]) {
      assert.equal(s.worktree!.repoRoot, repo);
      assert.ok(s.worktree!.path.startsWith(join(dir, "agent", "pi-shepherd", "worktrees")), "under the private state dir");
      assert.equal(s.cwd, s.worktree!.path);
      assert.match(s.text, /Your uncommitted changes \(1 file\) are not in it: it starts from your last commit\./);
    }
    assert.deepEqual((await worktreeList(repo)).sort(), [repo, s1.worktree!.path, s2.worktree!.path].sort());
    // Both at work at once, then one wait for both.
    const p1 = await scene.prompt(s1.agentId, work([[edit("shared.txt", "line 2", "from one"), write("one-new.txt", "new\n")]], "one done"));
    const p2 = await scene.prompt(s2.agentId, work([[edit("shared.txt", "line 2", "from two")]], "two done"));
    const waited = await ok({ action: "wait", promptIds: [p1, p2], timeout: 120 });
    const [r1, r2] = waited.details.results as [Result, Result];
    assert.deepEqual(changes(r1.evidence), [
      ["one-new.txt", "added", 1, 0],
      ["shared.txt", "modified", 1, 1],
    ]);
    assert.deepEqual(changes(r2.evidence), [["shared.txt", "modified", 1, 1]]);
    assert.equal(r1.evidence!.shared, false);
    assert.doesNotMatch(waited.text, /works in your checkout/);
    assert.match(await readFile(join(s1.worktree!.path, "shared.txt"), "utf8"), /from one/);
    assert.match(await readFile(join(s2.worktree!.path, "shared.txt"), "utf8"), /from two/);
    assert.equal(await readFile(join(repo, "shared.txt"), "utf8"), lines(5), "the user's checkout has neither");
    assert.equal(await status(repo), "?? scratch.txt\n", "only the person's own file");
    const herd = (await ok({ action: "herd" })).details.agents as { label: string; worktree?: Worktree }[];
    assert.deepEqual(herd.map((h) => [h.label, Boolean(h.worktree)]).sort(), [
      ["one", true],
      ["two", true],
    ]);
  });

  it("land refuses a change of yours to a file it writes, brings one sheep's work in, and the conflicting second stops with its path, changing nothing", async () => {
    const shared = await readFile(join(repo, "shared.txt"), "utf8");
    await writeFiles(repo, { "shared.txt": `${shared}the person's\n` });
    await scene.fails(
      { action: "land", agentId: one.agentId },
      /^\[land_refused\] your checkout .* has uncommitted changes in files the landing would write: shared\.txt; .*Nothing was changed\./,
    );
    await writeFiles(repo, { "shared.txt": shared });
    // The person's untracked scratch.txt is nothing land writes: it stays, and does not stop it.
    const landed = await ok({ action: "land", agentId: one.agentId });
    const l = landed.details.landed as { landed: boolean; into: string; commit: string; files: FileChange[] };
    assert.equal(l.landed, true);
    assert.equal(l.into, "main");
    assert.match(
      landed.text,
      /^Landed shepherd\/one-\w+ of one \(a_\w+\) into main by a (fast-forward \(no new commit\)|merge commit) \(\w+\): \+2 −1 in 2 files\./,
    );
    assert.equal(await readFile(join(repo, "scratch.txt"), "utf8"), "the person's own, uncommitted\n");
    await rm(join(repo, "scratch.txt"));
    assert.match(await readFile(join(repo, "shared.txt"), "utf8"), /from one/);
    assert.equal(await readFile(join(repo, "one-new.txt"), "utf8"), "new\n");
    assert.equal(await status(repo), "");
    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    assert.equal(head, l.commit);

    await scene.fails(
      { action: "land", agentId: two.agentId },
      /^\[land_refused\] landing shepherd\/two-\w+ into main conflicts in: shared\.txt\. Bring main into the sheep's worktree with action "sync" .*By hand: git -C .* merge [0-9a-f]{40} \(the tip of main\).* Nothing was changed\.$/,
    );
    assert.equal((await git(repo, "rev-parse", "HEAD")).trim(), head, "HEAD did not move");
    assert.equal(await status(repo), "", "the checkout is untouched");
    assert.match(await readFile(join(two.worktree!.path, "shared.txt"), "utf8"), /from two/, "the sheep's work is still there");

    const again = await scene.shepherd.slash("/shepherd land one");
    assert.match(again[0]!.text, /^Nothing to land: main already holds everything one/);
  });

  it("close keeps worktrees unless asked; one with work needs force; git's list matches at every step", async () => {
    await scene.fails(
      { action: "close", agentId: two.agentId, removeWorktree: true },
      /^\[dirty_worktree\] .*uncommitted changes \(shared\.txt\); nothing was closed/,
    );
    assert.equal(
      ((await ok({ action: "status", agentId: two.agentId })).details.status as { state: string }).state,
      "idle",
      "the refused close closed nothing",
    );
    const closedTwo = await ok({ action: "close", agentId: two.agentId });
    assert.deepEqual((closedTwo.details.closed as { worktree: { removed: boolean } }).worktree.removed, false);
    assert.match(closedTwo.text, /Its worktree .* and branch shepherd\/two-\w+ are kept/);
    const closedOne = await ok({ action: "close", agentId: one.agentId, removeWorktree: true });
    assert.equal((closedOne.details.closed as { worktree: { removed: boolean } }).worktree.removed, true, "landed work: removed without force");
    assert.deepEqual((await worktreeList(repo)).sort(), [repo, two.worktree!.path].sort());
    const pruned = await ok({ action: "prune" });
    assert.match(pruned.text, /Kept the worktree of two \(a_\w+\) at .*: it has uncommitted changes \(shared\.txt\)/);
    assert.deepEqual((await worktreeList(repo)).sort(), [repo, two.worktree!.path].sort(), "prune never removes a worktree with changes");
    const notices = await scene.shepherd.slash("/shepherd close two --remove-worktree --force");
    assert.match(notices[0]!.text, /^two \(a_\w+\) was already closed\. Its worktree .* were removed\./);
    assert.deepEqual(await worktreeList(repo), [repo]);
    assert.equal((await git(repo, "branch", "--list", "shepherd/*")).trim(), "", "their branches went with them");
  });

  it("hostile labels never reach a shell, and unicode and spaces in file names come through", async () => {
    const label = "--upload-pack=touch pwned $(touch pwned2) `touch pwned3`";
    const s = await start(label, { isolate: true });
    assert.match(s.worktree!.branch, /^shepherd\/upload-pack-touch-pwned-touch-pwned2-[A-Za-z0-9_-]*-\w{10}$/);
    const r = await ask(s.agentId, work([[write("dir with space/файл ü ☃.txt", "a\nb\n")]], "wrote it"));
    assert.deepEqual(changes(r.evidence), [["dir with space/файл ü ☃.txt", "added", 2, 0]]);
    for (const where of [repo, s.worktree!.path, join(dir, "agent")]) {
      for (const f of ["pwned", "pwned2", "pwned3"]) assert.equal(existsSync(join(where, f)), false, `${f} in ${where}`);
    }
    await ok({ action: "close", agentId: s.agentId, removeWorktree: true, force: true });
  });

  it("a 10,000-line change is bounded inline and whole on disk", async () => {
    const s = await start("big", { isolate: true });
    const r = await ask(s.agentId, work([[bash("seq 1 10000 > big.txt")]], "made it big"));
    assert.deepEqual(changes(r.evidence), [["big.txt", "added", 10_000, 0]]);
    assert.equal(r.evidence!.truncated, true);
    assert.equal(r.evidence!.patch.split("\n").length - 1, 200, "200 lines inline (the default)");
    assert.match(r.waitText, /Patch \(the first lines; all of it is in \/.*\.patch\):/);
    assert.ok(r.waitText.length < 20_000, "the model reads a bounded text");
    const full = await readFile(r.evidence!.patchPath, "utf8");
    assert.equal(full.split("\n").filter((l) => /^\+\d+$/.test(l)).length, 10_000);
    await ok({ action: "close", agentId: s.agentId, removeWorktree: true, force: true });
  });

  it("an isolated delegate shows its evidence, is closed, and its worktree waits to be landed", async () => {
    const r = await ok({ action: "delegate", agent: "echo", isolate: true, task: work([[write("from-delegate.txt", "x\ny\n")]], "delegated work done") });
    const [item] = r.details.results as { agentId: string; evidence?: Evidence; worktree?: Worktree }[];
    assert.deepEqual(changes(item!.evidence), [["from-delegate.txt", "added", 2, 0]]);
    assert.match(r.text, /^delegated work done\n\nEvidence: \+2 −0 in 1 file/);
    assert.match(r.text, /It works in its own worktree .* bring its work in with \{"action":"land"/);
    assert.equal(existsSync(join(repo, "from-delegate.txt")), false);
    // The delegate returned with its answer; its sheep closes after, off the call's path (issue 26).
    let state = "";
    for (let i = 0; i < 100 && state !== "closed"; i++) {
      state = ((await ok({ action: "status", agentId: item!.agentId })).details.status as { state: string }).state;
      if (state !== "closed") await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(state, "closed", "closed soon after the call returned");
    const notices = await scene.shepherd.slash("/shepherd land echo --squash");
    assert.match(notices[0]!.text, /^Landed shepherd\/echo-\w+ of echo \(a_\w+\) into main as one squashed commit/);
    assert.equal(await readFile(join(repo, "from-delegate.txt"), "utf8"), "x\ny\n");
    const pruned = await ok({ action: "prune" });
    assert.doesNotMatch(pruned.text, /Kept the worktree/, "landed, so prune may remove it");
    assert.deepEqual(await worktreeList(repo), [repo]);
  });

  it("an isolated chain: the second step works on what the first left in its worktree, and landing it brings both", async () => {
    const r = await ok({
      action: "delegate",
      isolate: true,
      chain: [
        { agent: "echo", task: work([[write("plan.txt", "the plan\n")]], "planned") },
        // Without afterTool the scripted model answers with the tool's result: what cat read.
        { agent: "echo", task: directive({ rounds: [[bash("cat plan.txt && echo built > built.txt")]] }) },
      ],
    });
    const [first, second] = r.details.results as { agentId: string; text: string; worktree?: Worktree }[];
    assert.equal(first!.text, "planned");
    assert.match(second!.text, /^TOOL_RESULT: the plan\b/, "the second step read the first step's file");
    assert.notEqual(first!.worktree!.path, second!.worktree!.path, "each step has a worktree of its own");
    assert.equal(existsSync(join(repo, "plan.txt")), false, "the user's checkout saw nothing yet");
    await ok({ action: "land", agentId: second!.agentId });
    assert.equal(await readFile(join(repo, "plan.txt"), "utf8"), "the plan\n");
    assert.equal(await readFile(join(repo, "built.txt"), "utf8"), "built\n");
    for (const item of [first!, second!]) await ok({ action: "close", agentId: item.agentId, removeWorktree: true, force: true });
    assert.deepEqual(await worktreeList(repo), [repo]);
  });

  it("a resumed isolated sheep takes its worktree over: it lands the work of both, and removes the worktree on close", async () => {
    const first = await start("resumable", { isolate: true });
    assert.equal((await ask(first.agentId, work([[write("before-resume.txt", "1\n")]], "wrote before"))).status, "completed");
    await ok({ action: "close", agentId: first.agentId });
    const second = (await ok({ action: "start", resume: "resumable" })).details.agent as { agentId: string; cwd: string; worktree?: Worktree };
    assert.equal(second.worktree?.path, first.worktree!.path, "it runs in the same worktree, and owns it now");
    assert.equal(second.cwd, first.cwd);
    assert.equal((await ask(second.agentId, work([[write("after-resume.txt", "2\n")]], "wrote after"))).status, "completed");
    await ok({ action: "land", agentId: second.agentId });
    assert.equal(await readFile(join(repo, "before-resume.txt"), "utf8"), "1\n");
    assert.equal(await readFile(join(repo, "after-resume.txt"), "utf8"), "2\n");
    await ok({ action: "close", agentId: second.agentId, removeWorktree: true });
    assert.deepEqual(await worktreeList(repo), [repo]);
  });

  it("a resumed isolated sheep is still in the herd after /reload, and lands (issue 21, item 8)", async () => {
    // A shepherd of its own that can reload (RPC has no /reload; the test extension does what it does).
    const s = world!.scene({ cwd: repo, extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
    const first = (await s.ok({ action: "start", agent: "echo", label: "reloaded", isolate: true })).details.agent as { agentId: string; worktree: Worktree };
    const p1 = await s.prompt(first.agentId, work([[write("across-reload.txt", "1\n")]], "wrote it"));
    assert.equal((await s.wait(p1, 120)).status, "completed");
    await s.ok({ action: "close", agentId: first.agentId });
    const second = (await s.ok({ action: "start", resume: "reloaded" })).details.agent as { agentId: string; worktree?: Worktree };
    assert.equal(second.worktree?.path, first.worktree.path);
    const state = JSON.parse(await readFile(join(world!.agentDir, "pi-shepherd", "state.json"), "utf8")) as {
      agents: { agentId: string; worktree?: Worktree }[];
    };
    assert.equal(
      state.agents.find((a) => a.agentId === second.agentId)?.worktree?.path,
      first.worktree.path,
      "in state.json, worktree and all, before the reload",
    );
    const reattached = s.shepherd.next((e) => e.type === "extension_ui_request" && e.method === "notify" && /re-attached/.test(String(e.message)), 60_000);
    await s.shepherd.command({ type: "prompt", message: "/test-reload" });
    await reattached;
    const herd = (await s.ok({ action: "herd" })).details.agents as { agentId: string; label: string }[];
    assert.deepEqual(
      herd.map((a) => [a.agentId, a.label]),
      [[second.agentId, "reloaded"]],
      "the herd lists the resumed sheep after the reload",
    );
    assert.match(await s.fails({ action: "start", resume: "reloaded" }, /^\[not_resumable\]/), /still running/, "a second pi on its session is refused");
    await s.ok({ action: "land", agentId: "reloaded" });
    assert.equal(await readFile(join(repo, "across-reload.txt"), "utf8"), "1\n", "its work landed");
    await s.ok({ action: "close", agentId: second.agentId, removeWorktree: true });
    assert.deepEqual(await worktreeList(repo), [repo]);
  });

  it("leaves nothing running once the last sheep is closed", async () => {
    await scene.assertNothingLeft(tmuxPanes(sock.socket), []);
    assert.equal(await sock.serverGone(), true);
  });
});
