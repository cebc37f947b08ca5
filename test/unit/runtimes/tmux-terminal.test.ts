/**
 * A sheep's tmux pane as the panel's terminal: the keys' encoding (nothing tmux would read as
 * syntax, every character arriving as typed, bounded), the screen read, and on a private tmux
 * server the keys typed, the pipe of the pane's output shared by watchers and taken down with the
 * last, and every pane not marked as the sheep's refused.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MAX_TERMINAL_KEYS } from "../../../src/domain/bounds.ts";
import { ShepherdError } from "../../../src/domain/errors.ts";
import type { PaneSink } from "../../../src/ports/runtime.ts";
import { MARK } from "../../../src/runtimes/tmux/pane-table.ts";
import { keyCommand, PIPE_MARK, parseScreen } from "../../../src/runtimes/tmux/pane-terminal.ts";
import { TmuxRuntime } from "../../../src/runtimes/tmux/runtime.ts";
import { type PrivateTmux, startPrivateTmux } from "../../support/tmux-server.ts";

const code = (c: string) => (e: unknown) => e instanceof ShepherdError && e.code === c;

describe("terminal keys as tmux commands", () => {
  it("ASCII goes as hex codes, so tmux's syntax and control keys pass as the bytes typed", () => {
    assert.equal(keyCommand("%3", "ab"), "send-keys -t %3 -H 61 62");
    assert.equal(keyCommand("%3", `;#{}'"\\$~ \r\x1b\x03`), "send-keys -t %3 -H 3b 23 7b 7d 27 22 5c 24 7e 20 0d 1b 03");
  });

  it("every other character is a key of its own, between runs of hex", () => {
    assert.equal(keyCommand("%3", "aé☺😀\r"), "send-keys -t %3 -H 61 ; send-keys -t %3 é ☺ 😀 ; send-keys -t %3 -H 0d");
  });

  it("refuses a lone surrogate, more than the bound, and a pane id that is not tmux's", () => {
    assert.throws(() => keyCommand("%3", "a\ud800b"), code("invalid_params"));
    assert.throws(() => keyCommand("%3", "x".repeat(MAX_TERMINAL_KEYS + 1)), code("invalid_params"));
    assert.doesNotThrow(() => keyCommand("%3", "x".repeat(MAX_TERMINAL_KEYS)));
    assert.throws(() => keyCommand("%3; kill-server", "a"), code("invalid_params"));
  });
});

describe("a pane's screen as tmux tells it", () => {
  it("reads the size and cursor, keeps the rows with their escapes, one terminal row a line", () => {
    const s = parseScreen("a_0123456789\t10\t2\t3\t1\n\x1b[31mred\x1b[0m\nsecond\nthird\n", "a_0123456789");
    assert.deepEqual(s, { text: "\x1b[31mred\x1b[0m\r\nsecond", cols: 10, rows: 2, cursorX: 3, cursorY: 1 });
  });

  it("refuses a pane marked as another sheep's, and a size it cannot read", () => {
    assert.throws(() => parseScreen("a_9999999999\t10\t2\t0\t0\nx\n", "a_0123456789"), code("not_owned"));
    assert.throws(() => parseScreen("a_0123456789\t10\tmany\t0\t0\nx\n", "a_0123456789"), code("runtime_error"));
  });
});

describe("the terminal of a tmux pane", { timeout: 60_000 }, () => {
  let t: PrivateTmux;
  let runtime: TmuxRuntime;
  let ours: string;
  let foreign: string;
  const agentId = "a_0123456789";

  const capture = async (pane: string) => t.tmux(["capture-pane", "-p", "-t", pane]);
  const until = async (what: string, ok: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 100; i++) {
      if (await ok()) return;
      await sleep(50);
    }
    assert.fail(`never: ${what}`);
  };
  const sink = () => {
    const s: PaneSink & { got: Buffer; ended: string } = {
      got: Buffer.alloc(0),
      ended: "",
      output: (c) => {
        s.got = Buffer.concat([s.got, c]);
      },
      end: (why) => {
        s.ended = why;
      },
    };
    return s;
  };
  const terminalDirs = async () => (await readdir(tmpdir())).filter((n) => n.startsWith("pi-shepherd-term-"));

  before(async () => {
    t = await startPrivateTmux();
    runtime = new TmuxRuntime({ socket: t.socket, env: process.env });
    ours = (await t.tmux(["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "user", "cat"])).trim();
    await t.tmux(["set-option", "-p", "-t", ours, MARK, agentId]);
    foreign = (await t.tmux(["new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "user", "cat"])).trim();
    await t.tmux(["set-option", "-p", "-t", foreign, MARK, "a_9999999999"]);
  });

  after(async () => {
    await t?.cleanup();
  });

  it("types keys into the sheep's own pane, non-ASCII and tmux's syntax included", async () => {
    await runtime.sendKeys({ paneId: ours, agentId }, "hi é☺ ;#{x} $HOME\r");
    await until("the keys reached cat", async () => (await capture(ours)).includes("hi é☺ ;#{x} $HOME"));
  });

  it("refuses a pane marked as another sheep's, or not marked at all, and types nothing there", async () => {
    await assert.rejects(runtime.sendKeys({ paneId: foreign, agentId }, "nope\r"), code("not_owned"));
    await assert.rejects(runtime.sendKeys({ paneId: t.userPane, agentId }, "nope\r"), code("not_owned"));
    await sleep(100);
    assert.doesNotMatch(await capture(foreign), /nope/);
    assert.doesNotMatch(await capture(t.userPane), /nope/);
    await assert.rejects(runtime.watch({ paneId: foreign, agentId }, sink()), code("not_owned"));
    assert.equal((await t.tmux(["display-message", "-p", "-t", foreign, "#{pane_pipe}"])).trim(), "0", "no pipe on a pane not ours");
  });

  it("streams the pane: its screen first, then its output, to every watcher through one pipe, taken down with the last", async () => {
    const before = await terminalDirs();
    const a = sink();
    const b = sink();
    const wa = await runtime.watch({ paneId: ours, agentId }, a);
    const wb = await runtime.watch({ paneId: ours, agentId }, b);
    assert.match(wa.screen.text, /hi é☺/, "the screen as it is");
    assert.ok(wa.screen.cols > 0 && wa.screen.rows > 0);
    assert.equal((await t.tmux(["display-message", "-p", "-t", ours, "#{pane_pipe}"])).trim(), "1");
    assert.equal((await terminalDirs()).length, before.length + 1, "one pipe for both watchers");
    await runtime.sendKeys({ paneId: ours, agentId }, "streamed\r");
    await until("both watchers got the output", () => a.got.toString().includes("streamed") && b.got.toString().includes("streamed"));
    wa.close();
    wa.close();
    await sleep(100);
    assert.equal((await t.tmux(["display-message", "-p", "-t", ours, "#{pane_pipe}"])).trim(), "1", "the other watcher keeps the pipe");
    const had = b.got.length;
    await runtime.sendKeys({ paneId: ours, agentId }, "more\r");
    await until("the watcher left goes on", () => b.got.length > had);
    wb.close();
    await until("the pipe is taken down", async () => (await t.tmux(["display-message", "-p", "-t", ours, "#{pane_pipe}"])).trim() === "0");
    await until("its directory is removed", async () => (await terminalDirs()).length === before.length);
  });

  it("a watch opened as the last one leaves gets a live pipe of its own; quick opens and closes leave nothing behind", async () => {
    const before = await terminalDirs();
    for (let i = 0; i < 5; i++) (await runtime.watch({ paneId: ours, agentId }, sink())).close();
    const a = sink();
    const wa = await runtime.watch({ paneId: ours, agentId }, a);
    await runtime.sendKeys({ paneId: ours, agentId }, "again\r");
    await until("the new watcher gets the output", () => a.got.toString().includes("again"));
    wa.close();
    await until("every pipe is taken down", async () => (await t.tmux(["display-message", "-p", "-t", ours, "#{pane_pipe}"])).trim() === "0");
    await until("no directory is left", async () => (await terminalDirs()).length === before.length);
  });

  it("replaces a pipe left by a shepherd that died (its mark names a pid that is gone), and marks its own", async () => {
    const dead = spawnSync("true").pid;
    await t.tmux(["pipe-pane", "-O", "-t", ours, "cat > /dev/null"]);
    await t.tmux(["set-option", "-p", "-t", ours, PIPE_MARK, String(dead)]);
    const a = sink();
    const wa = await runtime.watch({ paneId: ours, agentId }, a);
    try {
      assert.equal((await t.tmux(["display-message", "-p", "-t", ours, `#{${PIPE_MARK}}`])).trim(), String(process.pid));
      await runtime.sendKeys({ paneId: ours, agentId }, "replaced\r");
      await until("the new pipe carries the output", () => a.got.toString().includes("replaced"));
    } finally {
      wa.close();
    }
    await until("its mark goes with it", async () => (await t.tmux(["display-message", "-p", "-t", ours, `#{pane_pipe}:#{${PIPE_MARK}}`])).trim() === "0:");
  });

  it("refuses a pane whose output someone else already pipes, and leaves that pipe alone", async () => {
    await t.tmux(["pipe-pane", "-O", "-t", ours, "cat > /dev/null"]);
    try {
      await assert.rejects(runtime.watch({ paneId: ours, agentId }, sink()), /already piped elsewhere/);
      assert.equal((await t.tmux(["display-message", "-p", "-t", ours, "#{pane_pipe}"])).trim(), "1");
    } finally {
      await t.tmux(["pipe-pane", "-t", ours]);
    }
    assert.ok(existsSync(t.socket));
  });
});
