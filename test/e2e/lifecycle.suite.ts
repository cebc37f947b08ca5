/**
 * The lifecycle of real pi sheep driven by a real pi shepherd over RPC, on the scripted model.
 * One suite, run once per runtime, each on the end-to-end world (with a fake herdr for herdr).
 */
import assert from "node:assert/strict";
import { existsSync, realpathSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type E2eWorld, type E2eWorldOptions, e2eWorld } from "../support/e2e-world.ts";
import { type RpcShepherd, testNode, testPiCli, type ToolOutcome } from "../support/rpc-shepherd.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

export interface RuntimeFixture {
  name: "tmux" | "herdr";
  /** Every pane id that currently exists, as the test sees it through the runtime. */
  panes(): Promise<string[]>;
  /** Kills a pane behind the shepherd's back, the way a person closing it would. */
  killPane(paneId: string): Promise<void>;
  /** A pane the shepherd did not create, and a way to tell it is untouched. */
  foreignPane: string;
  focusSnapshot(): Promise<string>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The world's options choose the runtime (`herdr` for the fake herdr); the fixture reads its panes. */
export function lifecycleSuite(worldOptions: E2eWorldOptions<"server">, runtimeOf: (world: E2eWorld) => RuntimeFixture) {
  describe("persistent sheep lifecycle with real pi", { timeout: 600_000 }, () => {
    let world: E2eWorld | undefined;
    let rt: RuntimeFixture;
    let model: ScriptedModel;
    let agentDir: string;
    let shepherd: RpcShepherd;
    let focusBefore: string;
    const sheepPids: number[] = [];

    const ok = (args: unknown): Promise<ToolOutcome> => shepherd.ok(args);
    const start = async (label: string) => {
      const r = await ok({ action: "start", agent: "echo", label });
      const agent = r.details.agent as { agentId: string; paneId: string; sessionPath: string; runtime: string };
      const status = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "sheep", agent.agentId, "status.json"), "utf8")) as { pid: number };
      sheepPids.push(status.pid);
      return { ...agent, text: r.text };
    };
    const prompt = async (agentId: string, message: string) => (await ok({ action: "prompt", agentId, message })).details.prompt as { promptId: string };
    type Item = { promptId: string; status: string; text?: string; error?: string };
    const wait = async (args: Record<string, unknown>) => (await ok({ action: "wait", ...args })).details.results as Item[];

    let A: Awaited<ReturnType<typeof start>>;
    let B: Awaited<ReturnType<typeof start>>;

    before(async () => {
      world = await e2eWorld("e2e", { ...worldOptions, work: true });
      ({ model, agentDir } = world);
      rt = runtimeOf(world);
      focusBefore = await rt.focusSnapshot();
      world.defer(() => {
        for (const pid of sheepPids) if (alive(pid)) process.kill(pid, "SIGKILL");
      });
      shepherd = world.shepherd();
    });

    after(() => world?.cleanup());

    it("start returns a ready sheep and sends it no task", async () => {
      A = await start("alpha");
      assert.match(A.agentId, /^a_/);
      assert.equal(A.runtime, rt.name);
      assert.ok((await rt.panes()).includes(A.paneId), "the sheep's pane exists");
      assert.equal(model.log.filter((l) => !l.tag?.startsWith("call-")).length, 0, "the sheep made no model request");
      const session = existsSync(A.sessionPath) ? await readFile(A.sessionPath, "utf8") : "";
      assert.ok(!session.split("\n").some((l) => l.includes('"role":"user"')), "the sheep's session holds no user message");
      // The sheep runs the very pi and node under test (PI_SHEPHERD_TEST_* in CI's older-pi run); pi
      // renames its process and its launch spec is deleted once read, so the sheep's own report
      // says which pi, and /proc which node.
      const status = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "sheep", A.agentId, "status.json"), "utf8")) as { piCli?: string };
      assert.equal(realpathSync(status.piCli ?? "(none reported)"), realpathSync(testPiCli));
      if (existsSync("/proc/self/exe")) assert.equal(realpathSync(`/proc/${sheepPids[0]}/exe`), realpathSync(testNode));
      B = await start("beta");
    });

    it("prompt returns before a delayed answer, and wait returns the exact text", async () => {
      const exact = 'Line one\n\n  indented `code` ünïcödé \u{1F411}  \ttab "quotes" $(not a command)';
      const p = await prompt(A.agentId, directive({ reply: exact, delayMs: 2500, tag: "A1" }));
      assert.match(p.promptId, /^p_/);
      const req = model.log.find((l) => l.tag === "A1");
      assert.equal(req?.lastByteAt, undefined, "prompt returned before the sheep's answer was sent");
      const [r] = await wait({ promptId: p.promptId });
      assert.equal(r!.status, "completed");
      assert.equal(r!.text, exact);
    });

    it("two sheep prompted and then waited together work at the same time and come back in input order", async () => {
      const pa = await prompt(A.agentId, directive({ reply: "from alpha", delayMs: 2000, tag: "OA" }));
      const pb = await prompt(B.agentId, directive({ reply: "from beta", delayMs: 2000, tag: "OB" }));
      const waited = await ok({ action: "wait", promptIds: [pb.promptId, pa.promptId] });
      const results = waited.details.results as Item[];
      // A person watching sees the wait tick: updates while it runs, none after it ended.
      assert.ok(waited.updates.length >= 1, "progress updates arrived during the wait");
      const progress = (waited.updates[0]!.details as { progress: { total: number; items: { label?: string; state: string }[] } }).progress;
      assert.equal(progress.total, 2);
      assert.deepEqual(
        progress.items.map((i) => i.label),
        ["beta", "alpha"],
      );
      assert.match(waited.updates[0]!.text, /^\d\/2 done$/);
      const endAt = shepherd.events.findLastIndex((e) => e.type === "tool_execution_end");
      assert.ok(!shepherd.events.slice(endAt).some((e) => e.type === "tool_execution_update"), "no update after the wait ended");
      assert.deepEqual(
        results.map((r) => [r.promptId, r.status, r.text]),
        [
          [pb.promptId, "completed", "from beta"],
          [pa.promptId, "completed", "from alpha"],
        ],
      );
      const a = model.log.find((l) => l.tag === "OA")!;
      const b = model.log.find((l) => l.tag === "OB")!;
      assert.ok(Math.max(a.receivedAt, b.receivedAt) < Math.min(a.lastByteAt!, b.lastByteAt!), "the two sheep's model calls overlapped");
    });

    it("a second unresolved prompt is refused, and a sheep answers prompt after prompt", async () => {
      const p1 = await prompt(A.agentId, directive({ reply: "first", delayMs: 1500 }));
      const refused = await shepherd.call({ action: "prompt", agentId: A.agentId, message: "too soon" });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /^\[prompt_pending\]/);
      assert.equal((await wait({ promptId: p1.promptId }))[0]!.text, "first");
      for (const n of [2, 3, 4]) {
        const p = await prompt(A.agentId, directive({ reply: `answer ${n}` }));
        assert.equal((await wait({ promptId: p.promptId }))[0]!.text, `answer ${n}`);
      }
    });

    it("a provider error comes back as failed with its reason", async () => {
      const p = await prompt(B.agentId, directive({ fail: 500, message: "scripted outage" }));
      const [r] = await wait({ promptId: p.promptId });
      assert.equal(r!.status, "failed");
      assert.match(r!.error!, /^\[provider_error\] .*scripted outage/);
    });

    it("a wait past its deadline returns timeout, and a second wait the answer", async () => {
      const p = await prompt(B.agentId, directive({ reply: "worth the wait", delayMs: 4000 }));
      const [t] = await wait({ promptId: p.promptId, timeout: 1 });
      assert.equal(t!.status, "timeout");
      const status = (await ok({ action: "status", agentId: B.agentId })).details.status as { state: string; activePromptId?: string };
      assert.equal(status.state, "working");
      assert.equal(status.activePromptId, p.promptId);
      const [r] = await wait({ promptId: p.promptId, timeout: 60 });
      assert.equal(r!.status, "completed");
      assert.equal(r!.text, "worth the wait");
    });

    it("a killed pane fails the wait instead of hanging", async () => {
      const C = await start("gamma");
      const p = await prompt(C.agentId, directive({ reply: "never seen", delayMs: 30_000 }));
      await rt.killPane(C.paneId);
      const [r] = await wait({ promptId: p.promptId, timeout: 25 });
      assert.equal(r!.status, "failed");
      assert.match(r!.error!, /^\[(pane_gone|pi_exited)\]/);
      const s = (await ok({ action: "status", agentId: C.agentId })).details.status as { state: string; paneAlive: boolean };
      assert.deepEqual([s.state, s.paneAlive], ["exited", false]);
    });

    it("close cancels the pending prompt; then status says closed and prompt is refused", async () => {
      const p = await prompt(B.agentId, directive({ reply: "cut short", delayMs: 30_000 }));
      const closed = (await ok({ action: "close", agentId: B.agentId })).details.closed as { cancelledPromptIds: string[]; alreadyClosed: boolean };
      // pi wrote its session with the prompt: close says where it is kept.
      const sessionPath = join(agentDir, "pi-shepherd", "sheep", B.agentId, "session.jsonl");
      assert.deepEqual(closed, { agentId: B.agentId, cancelledPromptIds: [p.promptId], alreadyClosed: false, sessionPath });
      assert.equal((await wait({ promptId: p.promptId }))[0]!.status, "cancelled");
      assert.equal(((await ok({ action: "status", agentId: B.agentId })).details.status as { state: string }).state, "closed");
      const refused = await shepherd.call({ action: "prompt", agentId: B.agentId, message: "hello?" });
      assert.match(refused.text, /^\[agent_closed\]/);
      const again = (await ok({ action: "close", agentId: B.agentId })).details.closed as { alreadyClosed: boolean };
      assert.equal(again.alreadyClosed, true, "closing twice is fine");
      assert.ok(!(await rt.panes()).includes(B.paneId), "the pane is gone");
      const left = await readdir(join(agentDir, "pi-shepherd", "sheep", B.agentId));
      assert.deepEqual(left.sort(), ["session.jsonl"], "only the session file is kept in its directory");
      const cards = await readdir(join(agentDir, "pi-shepherd", "cards"));
      assert.ok(cards.includes(`${B.agentId}.json`), "and the shepherd keeps the card that resumes it, outside the sheep's directory");
    });

    it("a closed sheep resumed goes on with its conversation; a running or unknown one is refused", async () => {
      const D = await start("delta");
      const first = directive({ reply: "noted: the word is PAPAYA", tag: "D1" });
      const p1 = await prompt(D.agentId, first);
      assert.equal((await wait({ promptId: p1.promptId }))[0]!.status, "completed");
      await ok({ action: "close", agentId: D.agentId });
      const r = await ok({ action: "start", resume: "delta" });
      const E = r.details.agent as { agentId: string; label: string; resumedFrom?: string; sessionPath: string };
      assert.match(r.text, /^Resumed "delta" \(echo\) from a_\w+, its conversation kept, as a_\w+ in /);
      assert.deepEqual([E.label, E.resumedFrom, E.sessionPath], ["delta", D.agentId, D.sessionPath]);
      const status = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "sheep", E.agentId, "status.json"), "utf8")) as { pid: number };
      sheepPids.push(status.pid);
      const p2 = await prompt(E.agentId, directive({ reply: "still here", tag: "E1" }));
      assert.equal((await wait({ promptId: p2.promptId }))[0]!.text, "still here");
      const seen = model.log.find((l) => l.tag === "E1")!;
      assert.ok(seen.userTexts.includes(first), "the earlier prompt reached the model with the new one");
      assert.match((await shepherd.call({ action: "start", resume: "delta" })).text, /^\[not_resumable\] sheep a_\w+ \(delta\) is still running/);
      assert.match((await shepherd.call({ action: "start", resume: D.agentId })).text, /^\[not_resumable\] the conversation of a_\w+ already goes on in/);
      assert.match((await shepherd.call({ action: "start", resume: "nobody" })).text, /^\[unknown_agent\]/);
      await ok({ action: "close", agentId: E.agentId });
    });

    it("a pane the shepherd did not create survives everything, and nothing took focus", async () => {
      assert.ok((await rt.panes()).includes(rt.foreignPane));
      assert.equal(await rt.focusSnapshot(), focusBefore);
    });

    it("when the shepherd quits, its sheep are closed and no pi is left running", async () => {
      await shepherd.stop();
      const panes = await rt.panes();
      assert.ok(!panes.includes(A.paneId), "the open sheep's pane was closed on exit");
      assert.ok(panes.includes(rt.foreignPane));
      for (let i = 0; i < 50 && sheepPids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(sheepPids.filter(alive), [], "no sheep pi process is left");
    });
  });
}
