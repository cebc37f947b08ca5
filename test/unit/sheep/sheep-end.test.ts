/**
 * The sheep's end of the file protocol (src/sheep/sheep-end.ts) without pi: a fake of the shapes it
 * needs (./pi-port.ts) and a temporary sheep directory. It takes each inbox prompt once, steers and
 * interrupts only its target's running turn, renews through a command's context, writes each
 * settled turn to the outbox, and reports its state to status.json and to the herdr sink.
 * (test/unit/sheep/sheep-ext.test.ts drives the same through extensions/sheep.ts and a stand-in for pi.)
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ensurePrivateDir, writeJsonAtomic } from "../../../src/protocol/files.ts";
import { sheepLayout, type SheepLayout } from "../../../src/protocol/layout.ts";
import type { InboxInterrupt, InboxPrompt, InboxRenew, InboxSteer, ResultFile, StatusReport } from "../../../src/protocol/messages.ts";
import type { SheepState } from "../../../src/sheep/herdr-state.ts";
import type { RenewContext, SheepPi, SheepSession } from "../../../src/sheep/pi-port.ts";
import { RENEW_COMMAND, SheepEnd } from "../../../src/sheep/sheep-end.ts";

type Sent = { text: string; options?: { deliverAs?: "steer" | "followUp"; expandPromptTemplates?: boolean } };

/** pi as the sheep's end sees it: what it was sent, its aborts, its idleness and its session file. */
class FakePi implements SheepPi {
  readonly sent: Sent[] = [];
  aborts = 0;
  idle = true;
  sessionFile: string | undefined = undefined;
  /** The sheep's own renew command line, run as pi's dispatch would (set once the end exists). */
  dispatch: ((args: string) => void) | undefined;
  readonly session: SheepSession = {
    isIdle: () => this.idle,
    abort: () => {
      this.aborts++;
    },
    sessionManager: { getSessionFile: () => this.sessionFile },
  };
  sendUserMessage(text: string, options?: Sent["options"]): void {
    const command = new RegExp(`^/${RENEW_COMMAND} (.*)$`).exec(text);
    if (command && options?.expandPromptTemplates && this.dispatch) this.dispatch(command[1]!);
    else this.sent.push(options ? { text, options } : { text });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the sheep's end of the file protocol", () => {
  let dir: string;
  let layout: SheepLayout;
  let pi: FakePi;
  let end: SheepEnd;
  let states: SheepState[];

  const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await ok()); i++) await sleep(10);
    assert.ok(await ok(), what);
  };
  const status = async () => JSON.parse(await readFile(layout.status, "utf8")) as StatusReport;
  const result = async (id: string) => JSON.parse(await readFile(layout.outboxFile(id), "utf8").catch(() => "null")) as ResultFile | null;
  const inbox = () => readdir(layout.inbox);
  const put = (seq: number, promptId: string, text: string) =>
    writeJsonAtomic(layout.inboxFile(String(seq).padStart(16, "0"), promptId), {
      promptId,
      text,
      submittedAt: new Date().toISOString(),
    } satisfies InboxPrompt);
  const steer = (seq: number, steerId: string, target: string, text: string) =>
    writeJsonAtomic(layout.inboxFile(String(seq).padStart(16, "0"), steerId), {
      kind: "steer",
      steerId,
      target,
      text,
      submittedAt: new Date().toISOString(),
    } satisfies InboxSteer);
  const interrupt = (seq: number, interruptId: string, target: string) =>
    writeJsonAtomic(layout.inboxFile(String(seq).padStart(16, "0"), interruptId), {
      kind: "interrupt",
      interruptId,
      target,
      submittedAt: new Date().toISOString(),
    } satisfies InboxInterrupt);
  const renew = (seq: number, renewId: string) =>
    writeJsonAtomic(layout.inboxFile(String(seq).padStart(16, "0"), renewId), {
      kind: "renew",
      renewId,
      submittedAt: new Date().toISOString(),
    } satisfies InboxRenew);
  /** A turn's last assistant message, then pi saying the run is over. */
  const settle = (text: string, stopReason = "stop") => {
    end.messageEnd({ role: "user", content: [{ type: "text", text: "not an answer" }] });
    end.messageEnd({ role: "assistant", content: [{ type: "text", text }], stopReason });
    end.agentSettled();
  };
  /** Rings the end's scan now, as its inbox watch or poll would. */
  const ring = () => end.sessionStart(pi.session);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sheep-end-"));
    layout = sheepLayout(dir);
    await ensurePrivateDir(layout.inbox);
    await ensurePrivateDir(layout.outbox);
    pi = new FakePi();
    states = [];
    end = new SheepEnd(pi, layout, { herdr: () => ({ update: (s) => void states.push(s) }) });
    end.sessionStart(pi.session);
  });

  afterEach(async () => {
    end.sessionShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  it("reports itself idle and ready on session start, with its pid and the session file", async () => {
    pi.sessionFile = join(dir, "session.jsonl");
    ring();
    const st = await status();
    assert.equal(st.state, "idle");
    assert.equal(st.pid, process.pid);
    assert.equal(st.sessionPath, pi.sessionFile);
    assert.equal(st.activePromptId, undefined);
    assert.deepEqual(states.at(-1), { working: false });
  });

  it("takes inbox prompts one at a time, in order, each once, and writes each settled turn to the outbox", async () => {
    await put(1, "p_0000000001", "first");
    await put(2, "p_0000000002", "second");
    ring();
    await until("the first prompt was sent", () => pi.sent.length === 1);
    assert.deepEqual(pi.sent, [{ text: "first" }], "an idle pi gets it as its own turn");
    assert.deepEqual(await inbox(), ["0000000000000002-p_0000000002.json"], "read once, its file is gone; the next waits");
    assert.ok((await readdir(layout.taken)).includes("p_0000000001"), "marked taken");
    assert.equal((await status()).activePromptId, "p_0000000001");
    assert.equal((await status()).state, "working");
    assert.deepEqual(states.at(-1), { working: true });

    ring();
    await sleep(50);
    assert.equal(pi.sent.length, 1, "nothing more while the turn runs");

    end.agentStart();
    settle("one");
    const first = await result("p_0000000001");
    assert.deepEqual([first?.status, first?.text, first?.stopReason], ["completed", "one", "stop"]);
    assert.ok(first?.startedAt && first.finishedAt && first.startedAt <= first.finishedAt, "started before it finished");
    await until("the second prompt was sent", () => pi.sent.length === 2);
    end.agentStart();
    settle("two", "error");
    assert.equal((await result("p_0000000002"))?.status, "failed", "a turn that ended in an error");
    assert.equal((await status()).state, "idle");

    // Written again (a shepherd that re-sends it), and read by a new end on the same dir (pi restarted).
    await put(3, "p_0000000001", "first");
    ring();
    await until("the copy was dropped", async () => (await inbox()).length === 0);
    const again = new SheepEnd(pi, layout);
    await put(4, "p_0000000002", "second");
    again.sessionStart(pi.session);
    await until("the restarted end dropped it too", async () => (await inbox()).length === 0);
    again.sessionShutdown();
    assert.deepEqual(
      pi.sent.map((s) => s.text),
      ["first", "second"],
      "each prompt reached pi exactly once",
    );
  });

  it("queues a prompt as a follow-up behind a person's running turn", async () => {
    pi.idle = false;
    await put(1, "p_0000000031", "after you");
    ring();
    await until("the prompt was sent", () => pi.sent.length === 1);
    assert.deepEqual(pi.sent[0], { text: "after you", options: { deliverAs: "followUp" } });
  });

  it("answers a prompt file that does not say what its name says as failed, and sends nothing", async () => {
    await writeJsonAtomic(layout.inboxFile("0000000000000001", "p_0000000041"), { promptId: "p_0000000099", text: "x", submittedAt: "x" });
    ring();
    await until("the failure is written", async () => (await result("p_0000000041")) !== null);
    const r = (await result("p_0000000041"))!;
    assert.deepEqual([r.status, r.errorMessage], ["failed", "the prompt file could not be read"]);
    assert.deepEqual(pi.sent, []);
  });

  it("a steer waits for its target's turn to begin, joins it once, and is dropped once that turn is over", async () => {
    await put(1, "p_0000000011", "work");
    await steer(2, "s_0000000011", "p_0000000011", "focus on the gate");
    ring();
    await until("the prompt was sent", () => pi.sent.length === 1);
    await sleep(50);
    assert.deepEqual(await inbox(), ["0000000000000002-s_0000000011.json"], "the steer waits for the turn to begin");
    end.agentStart();
    await until("the steer joined the turn", () => pi.sent.length === 2);
    assert.deepEqual(pi.sent[1], { text: "focus on the gate", options: { deliverAs: "steer" } });
    settle("gate checked");
    const r = (await result("p_0000000011"))!;
    assert.deepEqual([r.text, r.steered], ["gate checked", ["s_0000000011"]]);

    await steer(3, "s_0000000012", "p_0000000011", "too late");
    await steer(4, "s_0000000011", "p_0000000011", "a copy");
    ring();
    await until("the late steer and the copy were dropped", async () => (await inbox()).length === 0);
    assert.equal(pi.sent.length, 2, "never a turn of its own");
  });

  it("an interrupt aborts its target's running turn once, which is written as cancelled", async () => {
    await put(1, "p_0000000021", "work long");
    await interrupt(2, "i_0000000021", "p_0000000021");
    ring();
    await until("the prompt was sent", () => pi.sent.length === 1);
    await sleep(50);
    assert.equal(pi.aborts, 0, "no abort before the turn began");
    end.agentStart();
    await until("the turn was aborted", () => pi.aborts === 1);
    await until("the interrupt's file is gone", async () => (await inbox()).length === 0);
    settle("half", "aborted");
    const r = (await result("p_0000000021"))!;
    assert.deepEqual([r.status, r.text], ["cancelled", "half"]);

    await interrupt(3, "i_0000000021", "p_0000000021");
    await interrupt(4, "i_0000000022", "p_0000000021");
    await put(5, "p_0000000022", "next");
    ring();
    await until("the next prompt was sent", () => pi.sent.length === 2);
    end.agentStart();
    await until("the stale interrupts were dropped", async () => (await inbox()).length === 0);
    await sleep(50);
    assert.equal(pi.aborts, 1, "never a second abort, nor one of another turn");
  });

  it("writes the result after agent_end's pause on a pi without agent_settled", async () => {
    await put(1, "p_0000000051", "old pi");
    ring();
    await until("the prompt was sent", () => pi.sent.length === 1);
    end.agentStart();
    end.messageEnd({ role: "assistant", content: [{ type: "text", text: "late" }], stopReason: "stop" });
    end.agentEnd();
    assert.equal(await result("p_0000000051"), null, "not at agent_end itself: a retry may follow");
    await until("written after the pause", async () => (await result("p_0000000051")) !== null);
    assert.equal((await result("p_0000000051"))?.text, "late");
  });

  describe("a renewal", () => {
    let outcome: "new" | "cancelled" | "throws";
    const ctx: RenewContext = {
      waitForIdle: async () => undefined,
      newSession: async (o) => {
        if (outcome === "throws") throw new Error("no session dir");
        if (outcome === "cancelled") return { cancelled: true };
        await o.withSession({ sessionManager: { getSessionFile: () => "/sessions/fresh.jsonl" } });
        return { cancelled: false };
      },
    };
    beforeEach(() => {
      outcome = "new";
      pi.dispatch = (args) => void end.renewCommand(args, ctx);
    });

    it("runs the sheep's own command, whose context starts the new session, and answers with its file", async () => {
      await renew(1, "r_aaaaaaaaaa");
      ring();
      await until("the renewal is answered", async () => (await result("r_aaaaaaaaaa")) !== null);
      const r = (await result("r_aaaaaaaaaa"))!;
      assert.deepEqual([r.status, r.sessionPath], ["completed", "/sessions/fresh.jsonl"]);
      assert.deepEqual(pi.sent, [], "nothing reached the model");
      assert.deepEqual(await inbox(), []);
    });

    it("answers failed when pi cancels or cannot start the session; the command nobody asked for does nothing", async () => {
      outcome = "cancelled";
      await renew(1, "r_bbbbbbbbbb");
      ring();
      await until("the cancelled renewal is answered", async () => (await result("r_bbbbbbbbbb")) !== null);
      assert.match((await result("r_bbbbbbbbbb"))!.errorMessage ?? "", /an extension cancelled the new session/);
      outcome = "throws";
      await renew(2, "r_cccccccccc");
      ring();
      await until("the failed renewal is answered", async () => (await result("r_cccccccccc")) !== null);
      assert.match((await result("r_cccccccccc"))!.errorMessage ?? "", /pi could not start a new session: no session dir/);
      outcome = "new";
      await end.renewCommand("r_dddddddddd", ctx);
      assert.equal(await result("r_dddddddddd"), null);
    });

    it("waits until no prompt of its own runs, and a prompt waits until the renewal is answered", async () => {
      pi.dispatch = undefined; // the command line stays with pi until this test runs it
      await put(1, "p_0000000061", "before");
      await renew(2, "r_ffffffffff");
      await put(3, "p_0000000062", "after");
      ring();
      await until("the prompt was sent", () => pi.sent.length === 1);
      await sleep(50);
      assert.equal(pi.sent.length, 1, "the renewal waits for the running prompt");
      end.agentStart();
      settle("done");
      await until("the renewal's command line was sent", () => pi.sent.length === 2);
      assert.deepEqual(pi.sent[1], { text: `/${RENEW_COMMAND} r_ffffffffff`, options: { expandPromptTemplates: true } });
      ring();
      await sleep(50);
      assert.equal(pi.sent.length, 2, "no prompt while the renewal is under way");
      await end.renewCommand("r_ffffffffff", ctx);
      assert.equal((await result("r_ffffffffff"))?.status, "completed");
    });

    it("a pi that sends the command line on as words: the input is caught and the renewal fails", async () => {
      pi.dispatch = undefined;
      await renew(1, "r_eeeeeeeeee");
      ring();
      await until("the command line was sent", () => pi.sent.length === 1);
      assert.equal(end.input("something a person typed"), false);
      assert.equal(end.input(pi.sent[0]!.text), true, "caught before the model");
      assert.match((await result("r_eeeeeeeeee"))!.errorMessage ?? "", /does not run commands an extension sends/);
      await put(2, "p_ffffffffff", "next");
      await until("the next prompt is sent", () => pi.sent.length === 2);
      assert.equal(pi.sent[1]!.text, "next");
    });
  });

  it("is blocked while a dialog, the herdr:blocked bus or a question to the shepherd holds, and tells herdr only its own", async () => {
    end.dialogStart({ kind: "confirm", title: " Delete the barn? " });
    assert.equal((await status()).blocked, "Delete the barn?");
    assert.deepEqual(states.at(-1), { working: false, blocked: "Delete the barn?", ownBlocked: "Delete the barn?" });
    end.dialogEnd();
    end.herdrBlocked({ active: true, label: "approve?" });
    assert.equal((await status()).blocked, "approve?");
    assert.deepEqual(states.at(-1), { working: false, blocked: "approve?" }, "another extension's block is not the sheep's own");
    end.herdrBlocked({ active: false });
    end.herdrBlocked({ active: false });
    assert.equal((await status()).blocked, undefined, "stray ends never count below zero");
    end.asking({ messageId: "m_0000000001", text: "Open\nthe gate?" });
    const st = await status();
    assert.equal(st.blocked, "question m_0000000001 to the shepherd: Open the gate?");
    assert.deepEqual(st.asking, { messageId: "m_0000000001", text: "Open\nthe gate?" });
    end.asking(undefined);
    assert.equal((await status()).blocked, undefined);
  });

  it("does not count the herdr sink's own bus events", async () => {
    let own: (on: boolean) => void = () => undefined;
    const other = new SheepEnd(pi, layout, {
      herdr: (onOwnEvent) => {
        own = onOwnEvent;
        return { update: () => undefined };
      },
    });
    other.sessionStart(pi.session);
    own(true);
    other.herdrBlocked({ active: true, label: "mine" });
    own(false);
    assert.equal((await status()).blocked, undefined);
    other.herdrBlocked({ active: true, label: "theirs" });
    assert.equal((await status()).blocked, "theirs");
    other.sessionShutdown();
  });

  describe("a budget (issue 35)", () => {
    const budgeted = (seq: number, promptId: string, text: string, budget: unknown) =>
      writeJsonAtomic(layout.inboxFile(String(seq).padStart(16, "0"), promptId), {
        promptId,
        text,
        submittedAt: new Date().toISOString(),
        budget,
      });
    const response = (text: string, usage: unknown, stopReason = "toolUse") =>
      end.messageEnd({ role: "assistant", content: [{ type: "text", text }], stopReason, usage });

    it("counts every response's usage and stops the turn (pi's abort, once) when the budget is spent; the result is budget_exceeded with the text there was", async () => {
      await budgeted(1, "p_0000000081", "work", { tokens: 1000, costUsd: 5 });
      ring();
      await until("the prompt was sent", () => pi.sent.length === 1);
      end.agentStart();
      response("half way", { input: 300, output: 100, totalTokens: 400, cost: { total: 0.01 } });
      assert.equal(pi.aborts, 0, "within the budget nothing is stopped");
      assert.deepEqual((await status()).spent, { tokens: 400, outputTokens: 100, costUsd: 0.01 });
      response("", { input: 500, output: 200, totalTokens: 700 });
      assert.equal(pi.aborts, 1, "the turn was stopped after the response that spent the budget");
      response("", { input: 10, output: 0 }, "aborted");
      assert.equal(pi.aborts, 1, "one abort, not one per response after it");
      end.agentSettled();
      await until("the result was written", async () => (await result("p_0000000081")) !== null);
      const r = (await result("p_0000000081"))!;
      assert.equal(r.status, "failed");
      assert.equal(r.budgetExceeded, true);
      assert.equal(r.text, "half way", "the answer text there was");
      assert.match(r.errorMessage ?? "", /1110 tokens spent of a budget of 1000/);
      assert.deepEqual(r.spent, { tokens: 1110, outputTokens: 300, costUsd: 0.01 });
    });

    it("a prompt to a sheep whose budget is already spent is answered budget_exceeded at once, and nothing reaches the model", async () => {
      await budgeted(1, "p_0000000082", "first", { outputTokens: 50 });
      ring();
      await until("the prompt was sent", () => pi.sent.length === 1);
      end.agentStart();
      response("done", { output: 60 }, "stop");
      end.agentSettled();
      await until("the first result", async () => (await result("p_0000000082")) !== null);
      assert.equal((await result("p_0000000082"))!.budgetExceeded, true, "a final answer past the budget is still over it");
      await budgeted(2, "p_0000000083", "second", { outputTokens: 50 });
      ring();
      await until("the second result", async () => (await result("p_0000000083")) !== null);
      assert.equal(pi.sent.length, 1, "the second prompt never went to the model");
      assert.match((await result("p_0000000083"))!.errorMessage ?? "", /60 output tokens spent of a budget of 50/);
    });

    it("hostile usage counts are no counts, and a prompt without a budget holds no limit", async () => {
      await budgeted(1, "p_0000000084", "work", { tokens: "all of them", costUsd: -1 });
      ring();
      await until("the prompt was sent", () => pi.sent.length === 1);
      end.agentStart();
      response("x", { input: "1e12", output: Number.NaN, totalTokens: -5, cost: { total: Number.POSITIVE_INFINITY } });
      response("y", { input: 1e15, output: 2 });
      assert.equal(pi.aborts, 0);
      assert.deepEqual((await status()).spent, { tokens: 2, outputTokens: 2, costUsd: 0 });
      assert.equal((await status()).budget, undefined);
    });
  });

  it("after session shutdown it reads the inbox no more", async () => {
    end.sessionShutdown();
    await put(1, "p_0000000071", "nobody");
    await sleep(1200);
    assert.deepEqual(pi.sent, []);
    assert.equal((await inbox()).length, 1);
  });
});
