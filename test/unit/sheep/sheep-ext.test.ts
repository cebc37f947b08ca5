/**
 * extensions/sheep.ts against a stand-in for pi's extension API: what it reports as blocked from
 * its two sources (pi's dialog events and the herdr:blocked bus), that each inbox prompt is
 * submitted exactly once and its file removed (also when written again, or read by a restarted
 * pi), how a steer joins a running turn, and its shepherd_message tool.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import sheep from "../../../extensions/sheep.ts";
import { ensurePrivateDir, writeJsonAtomic } from "../../../src/protocol/files.ts";
import { sheepLayout, type SheepLayout } from "../../../src/protocol/layout.ts";
import { parseMessageLog } from "../../../src/protocol/message-log.ts";
import type { InboxInterrupt, InboxPrompt, InboxRenew, InboxSteer, ReplyFile, ResultFile, StatusReport } from "../../../src/protocol/messages.ts";

type Handler = (event: unknown, ctx?: unknown) => unknown;

/** Just the part of ExtensionAPI the sheep uses, with a way to fire what pi would. */
class FakePi {
  readonly handlers = new Map<string, Handler[]>();
  readonly bus = new Map<string, Handler[]>();
  readonly sent: { text: string; deliverAs?: string }[] = [];
  aborts = 0;
  readonly ctx = {
    sessionManager: { getSessionFile: () => undefined },
    isIdle: () => true,
    abort: () => {
      this.aborts++;
    },
  };
  readonly events = {
    on: (channel: string, h: Handler) => void this.bus.set(channel, [...(this.bus.get(channel) ?? []), h]),
    emit: (channel: string, data: unknown) => {
      for (const h of this.bus.get(channel) ?? []) h(data);
    },
  };
  on(name: string, h: Handler) {
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), h]);
  }
  readonly tools = new Map<string, { execute: (...args: unknown[]) => Promise<{ content: { text: string }[]; details: Record<string, unknown> }> }>();
  registerTool(def: { name: string; execute: (...args: unknown[]) => Promise<{ content: { text: string }[]; details: Record<string, unknown> }> }) {
    this.tools.set(def.name, def);
  }
  /** Calls a tool as pi would: (toolCallId, params, signal). */
  call(name: string, params: Record<string, unknown>, signal?: AbortSignal) {
    return this.tools.get(name)!.execute("call_1", params, signal);
  }
  readonly commands = new Map<string, (args: string, ctx: unknown) => Promise<void>>();
  registerCommand(name: string, o: { handler: (args: string, ctx: unknown) => Promise<void> }) {
    this.commands.set(name, o.handler);
  }
  /** How pi answers a command's newSession: a new session (its file), cancelled by an extension, or an error. */
  newSession: "new" | "cancelled" | "throws" = "new";
  /** pi 1.6 runs an extension's own command line (expandPromptTemplates); an older pi sends it on as words. */
  dispatches = true;
  readonly commandCtx = {
    waitForIdle: async () => undefined,
    newSession: async (o?: { withSession?: (ctx: unknown) => Promise<void> }) => {
      if (this.newSession === "throws") throw new Error("no session dir");
      if (this.newSession === "cancelled") return { cancelled: true };
      await o?.withSession?.({ sessionManager: { getSessionFile: () => "/sessions/fresh.jsonl" } });
      return { cancelled: false };
    },
  };
  sendUserMessage(text: string, opts?: { deliverAs?: string; expandPromptTemplates?: boolean }) {
    const m = /^\/(\S+) ?(.*)$/.exec(text);
    const command = m && opts?.expandPromptTemplates && this.dispatches ? this.commands.get(m[1]!) : undefined;
    if (command) {
      void command(m![2]!, this.commandCtx);
      return;
    }
    this.sent.push({ text, ...(opts?.deliverAs ? { deliverAs: opts.deliverAs } : {}) });
  }
  async fire(name: string, event: Record<string, unknown> = {}) {
    for (const h of this.handlers.get(name) ?? []) await h({ type: name, ...event }, this.ctx);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the sheep extension", () => {
  let dir: string;
  let layout: SheepLayout;
  let pi: FakePi;
  const saved = process.env.PI_SHEPHERD_SHEEP_DIR;

  const status = async () => JSON.parse(await readFile(layout.status, "utf8")) as StatusReport;
  const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await ok()); i++) await sleep(10);
    assert.ok(await ok(), what);
  };
  const put = (seq: string, promptId: string, text: string) =>
    writeJsonAtomic(layout.inboxFile(seq, promptId), { promptId, text, submittedAt: new Date().toISOString() } satisfies InboxPrompt);
  const answer = async (text: string) => {
    await pi.fire("message_end", { message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" } });
    await pi.fire("agent_settled");
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sheep-ext-"));
    layout = sheepLayout(dir);
    await ensurePrivateDir(layout.inbox);
    await ensurePrivateDir(layout.outbox);
    process.env.PI_SHEPHERD_SHEEP_DIR = dir;
    pi = new FakePi();
    sheep(pi as never);
    await pi.fire("session_start", { reason: "startup" });
  });

  afterEach(async () => {
    await pi.fire("session_shutdown", { reason: "quit" });
    if (saved === undefined) delete process.env.PI_SHEPHERD_SHEEP_DIR;
    else process.env.PI_SHEPHERD_SHEEP_DIR = saved;
    await rm(dir, { recursive: true, force: true });
  });

  it("is blocked while pi shows a dialog, with its title, and not after it", async () => {
    assert.equal((await status()).blocked, undefined);
    await pi.fire("ui_prompt_start", { reason: "ui_prompt", kind: "confirm", title: "Delete the barn?" });
    assert.equal((await status()).blocked, "Delete the barn?");
    await pi.fire("ui_prompt_end", { reason: "ui_prompt", kind: "confirm", title: "Delete the barn?" });
    assert.equal((await status()).blocked, undefined);
    await pi.fire("ui_prompt_start", { reason: "ui_prompt", kind: "custom" });
    assert.equal((await status()).blocked, "a custom dialog", "a dialog without a title is named by its kind");
    await pi.fire("ui_prompt_end", { reason: "ui_prompt", kind: "custom" });
    assert.equal((await status()).blocked, undefined);
  });

  it("counts pi's dialogs and the herdr:blocked bus apart: one source ending leaves the other's block", async () => {
    pi.events.emit("herdr:blocked", { active: true, label: "approve the shell command?" });
    await until("the bus block is reported", async () => (await status()).blocked === "approve the shell command?");
    await pi.fire("ui_prompt_start", { reason: "ui_prompt", kind: "select", title: "Which pasture?" });
    assert.equal((await status()).blocked, "Which pasture?", "the open dialog is what the person sees");
    await pi.fire("ui_prompt_end", { reason: "ui_prompt", kind: "select", title: "Which pasture?" });
    assert.equal((await status()).blocked, "approve the shell command?", "the bus block still holds");
    pi.events.emit("herdr:blocked", { active: false });
    await until("the bus block ended", async () => (await status()).blocked === undefined);

    // A dialog that also announces itself on the bus ends when both have ended, never later.
    pi.events.emit("herdr:blocked", { active: true, label: "gate" });
    await pi.fire("ui_prompt_start", { reason: "ui_prompt", kind: "confirm", title: "gate" });
    pi.events.emit("herdr:blocked", { active: false });
    await pi.fire("ui_prompt_end", { reason: "ui_prompt", kind: "confirm", title: "gate" });
    await until("nothing is left blocked", async () => (await status()).blocked === undefined);

    // Stray ends never push a source below zero.
    await pi.fire("ui_prompt_end", { reason: "ui_prompt", kind: "confirm" });
    pi.events.emit("herdr:blocked", { active: false });
    pi.events.emit("herdr:blocked", { active: true, label: "once" });
    await until("one start blocks again", async () => (await status()).blocked === "once");
    pi.events.emit("herdr:blocked", { active: false });
    await until("one end unblocks", async () => (await status()).blocked === undefined);
  });

  it("submits each prompt once, in order, and removes its file once read", async () => {
    await put("0000000000000001", "p_0000000001", "first");
    await put("0000000000000002", "p_0000000002", "second");
    await pi.fire("session_start", { reason: "startup" }); // a scan, as the watcher or the poll would ring
    await until("the first prompt was submitted", () => pi.sent.length === 1);
    assert.deepEqual(await readdir(layout.inbox), ["0000000000000002-p_0000000002.json"], "the first prompt's file is gone, the second waits");
    assert.equal((await status()).activePromptId, "p_0000000001");

    // More scans while the turn runs submit nothing more.
    await pi.fire("session_start", { reason: "startup" });
    await sleep(50);
    assert.deepEqual(
      pi.sent.map((s) => s.text),
      ["first"],
    );

    await answer("one");
    await until("the second prompt was submitted", () => pi.sent.length === 2);
    assert.deepEqual(await readdir(layout.inbox), []);
    await answer("two");
    await pi.fire("session_start", { reason: "startup" });
    await sleep(50);
    assert.deepEqual(
      pi.sent.map((s) => s.text),
      ["first", "second"],
      "each prompt reached pi exactly once",
    );
    const results = await Promise.all(
      ["p_0000000001", "p_0000000002"].map(async (id) => JSON.parse(await readFile(layout.outboxFile(id), "utf8")) as ResultFile),
    );
    assert.deepEqual(
      results.map((r) => [r.status, r.text]),
      [
        ["completed", "one"],
        ["completed", "two"],
      ],
    );
    assert.deepEqual(await readdir(layout.inbox), [], "no claimed file is left behind");
  });

  it("never submits an id twice: not when the shepherd writes its file again, not after pi restarts", async () => {
    await put("0000000000000001", "p_0000000003", "once");
    await until("the prompt was submitted", () => pi.sent.length === 1);
    await answer("done once");
    // The same prompt written again (a shepherd that re-sends it), then a restarted pi on the same dir.
    await put("0000000000000002", "p_0000000003", "once");
    await pi.fire("session_start", { reason: "startup" });
    await until("the copy was dropped", async () => (await readdir(layout.inbox)).length === 0);
    pi = new FakePi();
    sheep(pi as never);
    await put("0000000000000003", "p_0000000003", "once");
    await pi.fire("session_start", { reason: "startup" });
    await until("the restarted sheep dropped it too", async () => (await readdir(layout.inbox)).length === 0);
    assert.deepEqual(pi.sent, [], "the restarted pi was never given it");
  });

  it("a steer joins its target's running turn, waits while that has not begun, and is dropped once it is over", async () => {
    const steer = (seq: string, steerId: string, target: string, text: string) =>
      writeJsonAtomic(layout.inboxFile(seq, steerId), { kind: "steer", steerId, target, text, submittedAt: new Date().toISOString() } satisfies InboxSteer);
    await put("0000000000000001", "p_0000000011", "work");
    await steer("0000000000000002", "s_0000000011", "p_0000000011", "focus on the gate");
    await until("the prompt was submitted", () => pi.sent.length === 1);
    await sleep(50);
    assert.deepEqual(pi.sent, [{ text: "work" }], "no steer before the turn began");
    assert.deepEqual(await readdir(layout.inbox), ["0000000000000002-s_0000000011.json"], "the steer waits");
    await pi.fire("agent_start");
    await until("the steer went into the turn", () => pi.sent.length === 2);
    assert.deepEqual(pi.sent[1], { text: "focus on the gate", deliverAs: "steer" });
    await answer("gate checked");
    const result = JSON.parse(await readFile(layout.outboxFile("p_0000000011"), "utf8")) as ResultFile;
    assert.deepEqual([result.text, result.steered], ["gate checked", ["s_0000000011"]]);
    // Too late: its turn is over. Dropped, and never a turn of its own.
    await steer("0000000000000003", "s_0000000012", "p_0000000011", "too late");
    await pi.fire("session_start", { reason: "startup" });
    await until("the late steer was dropped", async () => (await readdir(layout.inbox)).length === 0);
    assert.equal(pi.sent.length, 2);
  });

  it("an interrupt aborts its target's running turn once (a cancelled result), waits while that has not begun, and is dropped once it is over", async () => {
    const interrupt = (seq: string, interruptId: string, target: string) =>
      writeJsonAtomic(layout.inboxFile(seq, interruptId), {
        kind: "interrupt",
        interruptId,
        target,
        submittedAt: new Date().toISOString(),
      } satisfies InboxInterrupt);
    await put("0000000000000001", "p_0000000021", "work long");
    await interrupt("0000000000000002", "i_0000000021", "p_0000000021");
    await until("the prompt was submitted", () => pi.sent.length === 1);
    await sleep(50);
    assert.equal(pi.aborts, 0, "no abort before the turn began");
    assert.deepEqual(await readdir(layout.inbox), ["0000000000000002-i_0000000021.json"], "the interrupt waits");
    await pi.fire("agent_start");
    await until("the turn was aborted", () => pi.aborts === 1);
    await until("the interrupt file is gone", async () => (await readdir(layout.inbox)).length === 0);
    await pi.fire("message_end", { message: { role: "assistant", content: [{ type: "text", text: "half" }], stopReason: "aborted" } });
    await pi.fire("agent_settled");
    const result = JSON.parse(await readFile(layout.outboxFile("p_0000000021"), "utf8")) as ResultFile;
    assert.deepEqual([result.status, result.text], ["cancelled", "half"]);
    // Written again, or after its turn: never a second abort, and never of another turn.
    await interrupt("0000000000000003", "i_0000000021", "p_0000000021");
    await interrupt("0000000000000004", "i_0000000022", "p_0000000021");
    await put("0000000000000005", "p_0000000022", "next");
    await until("the next prompt was submitted", () => pi.sent.length === 2);
    await pi.fire("agent_start");
    await until("the stale interrupts were dropped", async () => (await readdir(layout.inbox)).length === 0);
    await sleep(50);
    assert.equal(pi.aborts, 1);
  });

  it("shepherd_message appends to the log; a question that waits is blocked until the reply, which is its result", async () => {
    const sent = await pi.call("shepherd_message", { kind: "progress", text: "half the flock is in" });
    assert.match(sent.content[0]!.text, /^Sent to your shepherd as progress \(m_[0-9a-z]{10}\)\.$/);
    const asking = pi.call("shepherd_message", { kind: "question", text: "Open the north gate?", awaitReply: true, timeout: 30 });
    await until("the question is reported as blocking", async () => (await status()).asking !== undefined);
    const st = await status();
    assert.match(st.blocked ?? "", /^question m_\w+ to the shepherd: Open the north gate\?$/);
    const log = parseMessageLog(await readFile(layout.messages, "utf8"));
    assert.deepEqual(
      log.map((m) => [m.kind, m.text, m.awaitReply ?? false]),
      [
        ["progress", "half the flock is in", false],
        ["question", "Open the north gate?", true],
      ],
    );
    await writeJsonAtomic(layout.replyFile(st.asking!.messageId), {
      messageId: st.asking!.messageId,
      text: "Yes, then close it.",
      at: "x",
    } satisfies ReplyFile);
    const replied = await asking;
    assert.equal(replied.content[0]!.text, "The shepherd replied:\nYes, then close it.");
    assert.equal((await status()).blocked, undefined, "not blocked once answered");
    await assert.rejects(
      pi.call("shepherd_message", { kind: "done", text: "x", awaitReply: true }),
      /^Error: \[invalid_params\] "awaitReply" is for kind "question" only/,
    );
    await assert.rejects(pi.call("shepherd_message", { kind: "gossip", text: "x" }), /^Error: \[invalid_params\] "kind" must be one of/);
  });

  it("a question whose time is up says so, and marks its reply slot expired so a late reply is refused", async () => {
    const r = await pi.call("shepherd_message", { kind: "question", text: "Anyone there?", awaitReply: true, timeout: 1 });
    assert.match(r.content[0]!.text, /^No reply from the shepherd within 1s/);
    const [m] = parseMessageLog(await readFile(layout.messages, "utf8"));
    const slot = JSON.parse(await readFile(layout.replyFile(m!.messageId), "utf8")) as ReplyFile;
    assert.ok("expired" in slot && slot.expired);
    assert.equal((await status()).asking, undefined);
  });

  describe("a renewal: a fresh conversation in the same pi", () => {
    const renew = (seq: string, renewId: string) =>
      writeJsonAtomic(layout.inboxFile(seq, renewId), { kind: "renew", renewId, submittedAt: new Date().toISOString() } satisfies InboxRenew);
    const result = async (id: string) => JSON.parse(await readFile(layout.outboxFile(id), "utf8").catch(() => "null")) as ResultFile | null;

    it("runs the sheep's own command, whose context starts pi's new session, and answers with the new session file", async () => {
      await renew("0000000000000001", "r_aaaaaaaaaa");
      await until("the renewal is answered", async () => (await result("r_aaaaaaaaaa")) !== null);
      const r = (await result("r_aaaaaaaaaa"))!;
      assert.equal(r.status, "completed");
      assert.equal(r.sessionPath, "/sessions/fresh.jsonl");
      assert.deepEqual(pi.sent, [], "nothing reached the model");
      assert.deepEqual(await readdir(layout.inbox), []);
    });

    it("answers failed when pi cancels or cannot start the session, and the command typed by a person does nothing", async () => {
      pi.newSession = "cancelled";
      await renew("0000000000000001", "r_bbbbbbbbbb");
      await until("the cancelled renewal is answered", async () => (await result("r_bbbbbbbbbb")) !== null);
      assert.equal((await result("r_bbbbbbbbbb"))!.status, "failed");
      assert.match((await result("r_bbbbbbbbbb"))!.errorMessage ?? "", /cancelled/);
      pi.newSession = "throws";
      await renew("0000000000000002", "r_cccccccccc");
      await until("the failed renewal is answered", async () => (await result("r_cccccccccc")) !== null);
      assert.match((await result("r_cccccccccc"))!.errorMessage ?? "", /could not start a new session: no session dir/);
      pi.newSession = "new";
      await pi.commands.get("pi-shepherd-renew")!("r_dddddddddd", pi.commandCtx);
      assert.equal(await result("r_dddddddddd"), null, "a renewal nobody asked for");
    });

    it("a pi that sends the command line on as words: the input is caught before the model and the renewal fails", async () => {
      pi.dispatches = false;
      await renew("0000000000000001", "r_eeeeeeeeee");
      await until("the command line was sent", () => pi.sent.length === 1);
      const handled = [];
      for (const h of pi.handlers.get("input") ?? []) handled.push(await h({ type: "input", text: pi.sent[0]!.text, source: "extension" }, pi.ctx));
      assert.deepEqual(handled, [{ action: "handled" }]);
      assert.equal((await result("r_eeeeeeeeee"))!.status, "failed");
      // A prompt after it is taken as usual.
      await put("0000000000000002", "p_ffffffffff", "next");
      await until("the next prompt is submitted", () => pi.sent.length === 2);
      assert.equal(pi.sent[1]!.text, "next");
    });
  });
});
