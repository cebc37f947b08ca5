/**
 * A sheep's herdr pane as the panel's terminal: the keys as herdr CLI calls (text, named keys, no
 * argument herdr would read as an option), the screen held to text and colours, the watch as a
 * poll (the first read is the screen, one read at a time, a redraw only on change, the end when
 * the pane is gone or lost its mark, nothing shown of a pane not marked), and on the fake herdr
 * (real tmux panes) for each herdr version: a screen watched and keys typed into it.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, afterEach, before, beforeEach, describe, it, mock } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MAX_TERMINAL_KEYS } from "../../../src/domain/bounds.ts";
import { ShepherdError } from "../../../src/domain/errors.ts";
import type { PaneSink } from "../../../src/ports/runtime.ts";
import { HerdrCli, type HerdrResult } from "../../../src/runtimes/herdr/cli.ts";
import { HerdrCommandError } from "../../../src/runtimes/herdr/errors.ts";
import { HerdrRuntime } from "../../../src/runtimes/herdr/index.ts";
import { keySteps } from "../../../src/runtimes/herdr/keys.ts";
import { FAST_MS, type HerdrCalls, HerdrPaneTerminals, KEYS_MS, MARK_EVERY_MS, SLOW_MS } from "../../../src/runtimes/herdr/pane-terminal.ts";
import { redrawBytes, screenOfRead } from "../../../src/runtimes/herdr/screen.ts";
import { createFakeHerdr, FAKE_HERDR_VERSIONS, type FakeHerdr } from "../../support/fake-herdr.ts";

const code = (c: string) => (e: unknown) => e instanceof ShepherdError && e.code === c;
const agentId = "a_0123456789";
const pane = { paneId: "w1:p2", agentId };

describe("terminal keys as herdr calls", () => {
  it("printable runs go as send-text, Enter and control keys as send-keys by herdr's names", () => {
    assert.deepEqual(keySteps("hello world\r"), [{ text: "hello world" }, { keys: ["enter"] }]);
    assert.deepEqual(keySteps("a\t\x7f\x03\x08\nb"), [{ text: "a" }, { keys: ["tab", "backspace", "ctrl+c", "ctrl+h", "ctrl+j"] }, { text: "b" }]);
    assert.deepEqual(keySteps("é☺😀;$'\"`"), [{ text: "é☺😀;$'\"`" }]);
  });

  it("the page's escape sequences: arrows (both forms), shift+tab, Escape, alt+letter", () => {
    assert.deepEqual(keySteps("\x1b[A\x1b[B\x1bOC\x1b[D\x1b[Z"), [{ keys: ["up", "down", "right", "left", "shift+tab"] }]);
    assert.deepEqual(keySteps("\x1b"), [{ keys: ["esc"] }]);
    assert.deepEqual(keySteps("\x1b\x1b"), [{ keys: ["esc", "esc"] }]);
    assert.deepEqual(keySteps("\x1bx"), [{ keys: ["alt+x"] }]);
  });

  it("a text never starts with a dash (herdr would read an option or -h): its first dash is the minus key", () => {
    assert.deepEqual(keySteps("-h"), [{ keys: ["minus"] }, { text: "h" }]);
    assert.deepEqual(keySteps("--help"), [{ keys: ["minus", "minus"] }, { text: "help" }]);
    assert.deepEqual(keySteps("a -h"), [{ text: "a -h" }]);
    assert.deepEqual(keySteps("\r-x"), [{ keys: ["enter", "minus"] }, { text: "x" }]);
  });

  it("refuses what herdr has no key for, a lone surrogate and more than the bound", () => {
    assert.throws(() => keySteps("a\x1b[3~"), code("invalid_params"));
    assert.throws(() => keySteps("\x00"), code("invalid_params"));
    assert.throws(() => keySteps("\x1c"), code("invalid_params"));
    assert.throws(() => keySteps("\u0085"), code("invalid_params"));
    assert.throws(() => keySteps("a\ud800"), code("invalid_params"));
    assert.throws(() => keySteps("x".repeat(MAX_TERMINAL_KEYS + 1)), code("invalid_params"));
    assert.doesNotThrow(() => keySteps("x".repeat(MAX_TERMINAL_KEYS)));
  });
});

describe("a herdr pane's screen", () => {
  it("keeps text and colours, one terminal row a line, at least 80×24, the cursor after the last row", () => {
    const s = screenOfRead("\x1b[31mred\x1b[0m\nsecond row");
    assert.deepEqual(s, { text: "\x1b[31mred\x1b[0m\r\nsecond row", cols: 80, rows: 24, cursorX: 10, cursorY: 1 });
    assert.equal(screenOfRead("x".repeat(130)).cols, 130);
  });

  it("drops every other escape and control: nothing of the pane moves, retitles or answers for the page's terminal", () => {
    const hostile = "a\x1b]0;title\x07b\x1b]52;c;Zm9v\x1b\\c\x1b[2J\x1b[10;1Hd\x1bPq#0\x1b\\e\x1b[6nf\x07\x08\r\x9b31mg\x1b[38;2;1;2;3mh\x1bci";
    const s = screenOfRead(hostile);
    // A C1 control (here CSI, 0x9b) goes; what followed it is plain text then.
    assert.equal(s.text, "abcdef31mg\x1b[38;2;1;2;3mhi");
    assert.equal(s.cursorX, 12);
  });

  it("a redraw clears the terminal, draws the rows and puts the cursor back", () => {
    assert.equal(redrawBytes(screenOfRead("ab\ncd")).toString(), "\x1b[0m\x1b[H\x1b[2Jab\r\ncd\x1b[0m\x1b[2;3H");
  });
});

describe("a bounded herdr read", () => {
  it("refuses an answer over its bound where it is read, and takes one within it", async () => {
    const cli = new HerdrCli({ bin: "/bin/sh", env: { PATH: process.env.PATH }, timeoutMs: 5_000 });
    await assert.rejects(
      cli.text(["-c", "head -c 5000 /dev/zero | tr '\\0' x"], 1000),
      (e: unknown) => e instanceof ShepherdError && /more than 1000 bytes/.test(e.message),
    );
    assert.equal((await cli.text(["-c", "printf abc"], 1000)).length, 3);
  });
});

/** herdr's CLI as the watch sees it: a screen and a label the test changes, every call recorded. */
class ScriptedHerdr implements HerdrCalls {
  screen = "first screen";
  label: string | undefined = `docs [${agentId}]`;
  gone = false;
  readDelayMs = 0;
  calls: string[][] = [];
  inFlight = 0;
  mostInFlight = 0;
  /** When set, a read waits for it: a read under way while the test acts. */
  gate: Promise<void> | undefined;
  /** Date.now() at each read and each mark read (the fake clock's, where it runs). */
  readAt: number[] = [];
  markAt: number[] = [];
  /** What send-text typed shows on the screen, as a shell's echo. */
  echo = false;

  #gone(): never {
    throw new HerdrCommandError("pane_gone", "pane_not_found", "herdr pane get failed: pane_not_found");
  }

  async request(args: readonly string[], expectType: string): Promise<HerdrResult> {
    this.calls.push([...args]);
    this.markAt.push(Date.now());
    assert.deepEqual([args[0], args[1], expectType], ["pane", "get", "pane_info"]);
    if (this.gone) this.#gone();
    return { type: "pane_info", pane: { pane_id: args[2], workspace_id: "w1", tab_id: "w1:t1", label: this.label } };
  }

  async silent(args: readonly string[]): Promise<void> {
    this.calls.push([...args]);
    if (this.gone) this.#gone();
    if (this.echo && args[1] === "send-text") this.screen += args[3];
  }

  async text(args: readonly string[], maxBytes?: number): Promise<string> {
    this.calls.push([...args]);
    assert.ok(maxBytes !== undefined && maxBytes > 0, "every read is bounded");
    this.readAt.push(Date.now());
    this.inFlight++;
    this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
    try {
      if (this.gate) await this.gate;
      if (this.readDelayMs) await sleep(this.readDelayMs);
      if (this.gone) this.#gone();
      return this.screen;
    } finally {
      this.inFlight--;
    }
  }

  reads(): number {
    return this.calls.filter((c) => c[1] === "read").length;
  }
}

function recordingSink() {
  const out: string[] = [];
  const ends: string[] = [];
  const sink: PaneSink = { output: (c) => out.push(c.toString("utf8")), end: (why) => ends.push(why) };
  return { sink, out, ends };
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (ok()) return;
    await sleep(10);
  }
  assert.fail(`never: ${what}`);
}

describe("the watch of a herdr pane (a poll)", () => {
  let h: ScriptedHerdr;
  let terminals: HerdrPaneTerminals;
  const closers: (() => void)[] = [];
  beforeEach(() => {
    h = new ScriptedHerdr();
    terminals = new HerdrPaneTerminals(h, { fastMs: 10, slowMs: 10, keysMs: 10, markEveryMs: 80 });
  });
  afterEach(() => {
    for (const c of closers.splice(0)) c();
  });

  it("its screen is the first read of the visible screen with colours, taken once the mark was read", async () => {
    const { sink } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    assert.equal(w.screen.text, "first screen");
    assert.deepEqual(h.calls.slice(0, 2), [
      ["pane", "read", "w1:p2", "--source", "visible", "--format", "ansi"],
      ["pane", "get", "w1:p2"],
    ]);
  });

  it("sends a whole redraw only when the screen changed, after reading the mark again", async () => {
    const { sink, out, ends } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    await until(() => h.reads() >= 4, "more reads");
    assert.equal(out.length, 0, "an unchanged screen is not sent again");
    const gets = h.calls.filter((c) => c[1] === "get").length;
    h.screen = "second\nscreen";
    await until(() => out.length === 1, "one redraw");
    assert.equal(out[0], "\x1b[0m\x1b[H\x1b[2Jsecond\r\nscreen\x1b[0m\x1b[2;7H");
    assert.ok(h.calls.filter((c) => c[1] === "get").length > gets, "the mark was read before the change was sent");
    const reads = h.reads();
    await until(() => h.reads() >= reads + 3, "more reads");
    assert.equal(out.length, 1, "still one redraw");
    assert.deepEqual(ends, []);
  });

  it("has one read in flight at a time", async () => {
    h.readDelayMs = 30;
    const { sink } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    await until(() => h.reads() >= 5, "reads");
    assert.equal(h.mostInFlight, 1);
  });

  it("ends, with a reason, when the pane is gone, and reads no more", async () => {
    const { sink, out, ends } = recordingSink();
    await terminals.watch(pane, sink);
    h.gone = true;
    await until(() => ends.length === 1, "the end");
    assert.match(ends[0]!, /w1:p2 is gone/);
    const calls = h.calls.length;
    await sleep(60);
    assert.equal(h.calls.length, calls, "no call after the end");
    assert.deepEqual(out, []);
  });

  it("ends when the pane lost its mark, and sends nothing of what it shows now", async () => {
    const { sink, out, ends } = recordingSink();
    await terminals.watch(pane, sink);
    h.label = "someone else's [a_zzzzzzzzzz]";
    h.screen = "a stranger's screen";
    await until(() => ends.length === 1, "the end");
    assert.match(ends[0]!, /no longer carries the mark of a_0123456789/);
    assert.deepEqual(out, []);
  });

  it("reads the mark of an unchanged pane too, at its interval, and ends when it is lost", async () => {
    const { sink, ends } = recordingSink();
    await terminals.watch(pane, sink);
    h.label = "relabelled";
    await until(() => ends.length === 1, "the end");
    assert.match(ends[0]!, /no longer carries the mark/);
  });

  it("refuses a pane that does not carry the mark, and a pane that is gone", async () => {
    h.label = "docs [a_zzzzzzzzzz]";
    await assert.rejects(terminals.watch(pane, recordingSink().sink), code("not_owned"));
    h.gone = true;
    await assert.rejects(terminals.watch(pane, recordingSink().sink), code("pane_gone"));
    await assert.rejects(terminals.watch({ paneId: "--help", agentId }, recordingSink().sink), code("invalid_params"));
  });

  it("close() stops the poll", async () => {
    const { sink, ends } = recordingSink();
    const w = await terminals.watch(pane, sink);
    await until(() => h.reads() >= 3, "reads");
    w.close();
    w.close();
    const calls = h.calls.length;
    await sleep(60);
    assert.ok(h.calls.length <= calls + 1, "at most the read under way ends");
    assert.deepEqual(ends, []);
  });

  it("keys: the mark first, then text and named keys; nothing typed into a pane not marked", async () => {
    await terminals.sendKeys(pane, "-hi\r");
    assert.deepEqual(h.calls, [
      ["pane", "get", "w1:p2"],
      ["pane", "send-keys", "w1:p2", "minus"],
      ["pane", "send-text", "w1:p2", "hi"],
      ["pane", "send-keys", "w1:p2", "enter"],
    ]);
    h.calls = [];
    h.label = "docs [a_zzzzzzzzzz]";
    await assert.rejects(terminals.sendKeys(pane, "intruder\r"), code("not_owned"));
    assert.deepEqual(h.calls, [["pane", "get", "w1:p2"]]);
    h.calls = [];
    await assert.rejects(terminals.sendKeys(pane, "x\x1b[3~"), code("invalid_params"));
    assert.deepEqual(h.calls, [], "a key herdr cannot type stops everything before any call");
  });
});

/** The fake clock moved on ms by ms, each step's promises settled before the next (a read's call answers at once). */
async function advance(ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    mock.timers.tick(1);
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** When an idle pane is read from t = 0 until `until`: FAST_MS after opening, then doubling to SLOW_MS. */
function backedOff(from: number, first: number, until: number): number[] {
  const at: number[] = [];
  for (let t = from + first, d = first; t <= until; d = Math.min(d * 2, SLOW_MS), t += d) at.push(t);
  return at;
}

describe("the herdr poll adapts (a fake clock)", () => {
  let h: ScriptedHerdr;
  let terminals: HerdrPaneTerminals;
  const closers: (() => void)[] = [];
  beforeEach(() => {
    mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
    h = new ScriptedHerdr();
    terminals = new HerdrPaneTerminals(h);
  });
  afterEach(() => {
    for (const c of closers.splice(0)) c();
    mock.timers.reset();
  });

  it(`backs off while the screen stays the same: ${FAST_MS} ms after opening, doubling to ${SLOW_MS} ms`, async () => {
    const { sink, out } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    h.readAt = [];
    await advance(12_000);
    assert.deepEqual(h.readAt, backedOff(0, FAST_MS, 12_000));
    assert.deepEqual(h.readAt.slice(0, 4), [250, 750, 1750, 3750]);
    assert.ok(h.readAt.length <= 9, `an idle pane read ${h.readAt.length} times in 12 s`);
    assert.deepEqual(out, []);
  });

  it(`a changed screen brings it back to ${FAST_MS} ms, its mark read before the redraw`, async () => {
    const { sink, out } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    await advance(6_000);
    h.screen = "moved";
    h.readAt = [];
    h.markAt = [];
    await advance(12_000 - 6_000);
    // Read at 7750 (the backed-off wait), then fast again.
    assert.deepEqual(h.readAt, [7_750, ...backedOff(7_750, FAST_MS, 12_000)]);
    assert.equal(out.length, 1);
    assert.ok(h.markAt.includes(7_750), `the mark was read with the changed read (${h.markAt})`);
  });

  it("keys typed through sendKeys: the pane is read at once, and the echo is sent with no wait", async () => {
    h.echo = true;
    h.screen = "$ ";
    const { sink, out } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    await advance(4_000);
    assert.equal(h.readAt.at(-1), 3_750, "backed off: the next read would be at 5750");
    h.readAt = [];
    await terminals.sendKeys(pane, "x");
    // At once: a timer of 0 ms, which fires after 1 ms as Node's do.
    await advance(1);
    assert.deepEqual(h.readAt, [4_001]);
    assert.equal(out.length, 1);
    assert.match(out[0]!, /\$ x/);
    // Fast again after the change.
    await advance(1_000);
    assert.deepEqual(h.readAt, [4_001, 4_001 + FAST_MS, 4_001 + 3 * FAST_MS]);
  });

  it(`keys whose echo is not there at once: read again after ${KEYS_MS} ms, doubling`, async () => {
    const { sink, out } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    await advance(4_000);
    h.readAt = [];
    await terminals.sendKeys(pane, "x");
    await advance(400);
    assert.deepEqual(h.readAt, [4_001, ...backedOff(4_001, KEYS_MS, 4_400)]);
    assert.equal(h.readAt[1], 4_001 + KEYS_MS);
    assert.deepEqual(out, []);
  });

  it("keys typed while a read is under way: one read at a time, the next at once after it", async () => {
    const { sink } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    let release!: () => void;
    h.gate = new Promise<void>((r) => (release = r));
    await advance(FAST_MS);
    assert.equal(h.inFlight, 1, "a read under way");
    h.gate = undefined;
    await terminals.sendKeys(pane, "x");
    await advance(100);
    assert.equal(h.reads(), 2, "no second read while the first is under way");
    release();
    await advance(2);
    assert.equal(h.reads(), 3, "read again at once when it ended");
    assert.equal(h.mostInFlight, 1);
  });

  it("keys into another pane do not wake this one", async () => {
    const { sink } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    await advance(4_000);
    h.readAt = [];
    await terminals.sendKeys({ paneId: "w1:p9", agentId }, "x");
    await advance(1_000);
    assert.deepEqual(h.readAt, []);
  });

  it(`an unchanged pane's mark is read at least every ${MARK_EVERY_MS} ms (not at every read), and its loss ends the watch`, async () => {
    const { sink, ends } = recordingSink();
    const w = await terminals.watch(pane, sink);
    closers.push(() => w.close());
    h.markAt = [];
    await advance(3 * MARK_EVERY_MS);
    const gaps = [0, ...h.markAt].slice(1).map((t, i) => t - [0, ...h.markAt][i]!);
    assert.ok(h.markAt.length >= 2, `mark read ${h.markAt.length} times in ${(3 * MARK_EVERY_MS) / 1000} s`);
    assert.ok(h.markAt.length < h.readAt.length, "not at every read");
    for (const g of gaps) assert.ok(g >= MARK_EVERY_MS && g <= MARK_EVERY_MS + SLOW_MS, `a gap of ${g} ms between mark reads`);
    h.label = "relabelled";
    await advance(MARK_EVERY_MS + SLOW_MS);
    assert.equal(ends.length, 1);
    assert.match(ends[0]!, /no longer carries the mark/);
  });
});

for (const version of FAKE_HERDR_VERSIONS) {
  describe(`the terminal of a pane on the fake herdr ${version}`, { timeout: 60_000 }, () => {
    let fake: FakeHerdr;
    let tmp: string;
    let runtime: HerdrRuntime;
    let paneId: string;
    before(async () => {
      fake = await createFakeHerdr({ version });
      tmp = await mkdtemp(path.join(os.tmpdir(), "herdr-term-"));
      const r = await fake.herdr(["workspace", "create", "--cwd", tmp, "--label", "sheep", "--no-focus"]);
      assert.equal(r.exitCode, 0, r.stderr);
      paneId = (JSON.parse(r.stdout) as { result: { root_pane: { pane_id: string } } }).result.root_pane.pane_id;
      const named = await fake.herdr(["pane", "rename", paneId, `docs [${agentId}]`]);
      assert.equal(named.exitCode, 0, named.stderr);
      runtime = new HerdrRuntime({ env: fake.env, bin: fake.bin });
    });
    after(async () => {
      await fake?.cleanup();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it("shows the pane's screen, and what keys typed there print comes as a redraw", async () => {
      const { sink, out, ends } = recordingSink();
      const w = await runtime.watch({ paneId, agentId }, sink);
      try {
        await runtime.sendKeys({ paneId, agentId }, "echo typed-$((6*7))\r");
        await until(() => out.some((o) => o.includes("typed-42")), "the command's output in a redraw");
        // A leading dash goes as herdr's minus key.
        await runtime.sendKeys({ paneId, agentId }, "echo ");
        await runtime.sendKeys({ paneId, agentId }, "-dash-$((1+1))\r");
        await until(() => out.some((o) => o.includes("-dash-2")), "the line typed with a leading dash, run");
        const last = out.at(-1)!;
        assert.ok(last.startsWith("\x1b[0m\x1b[H\x1b[2J"), "a whole redraw");
        assert.deepEqual(ends, []);
      } finally {
        w.close();
      }
    });

    it("refuses keys to a pane not marked as the sheep's, and types nothing", async () => {
      await assert.rejects(runtime.sendKeys({ paneId, agentId: "a_zzzzzzzzzz" }, "echo intruder\r"), code("not_owned"));
      await sleep(200);
      assert.doesNotMatch(await fake.tmux(["capture-pane", "-p", "-t", await fake.tmuxPaneOf(paneId)]), /intruder/);
    });

    it("ends the watch when the pane is closed", async () => {
      const { sink, ends } = recordingSink();
      await runtime.watch({ paneId, agentId }, sink);
      const closed = await fake.herdr(["pane", "close", paneId]);
      assert.equal(closed.exitCode, 0, closed.stderr);
      await until(() => ends.length === 1, "the end of the watch");
      assert.match(ends[0]!, /is gone/);
    });
  });
}
