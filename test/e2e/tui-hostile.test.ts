/**
 * What a sheep writes reaches the person's terminal only as printable text, and collapsed views
 * show the answers: a real pi shepherd in pi's interactive TUI (a private tmux server, read with
 * capture-pane -e), real pi sheep on the scripted model.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";
import { recordedSheep } from "../support/state-file.ts";

const ESC = "\u001b";
const BEL = "\u0007";
const ST = `${ESC}\\`;

/**
 * Text a sheep writes with every hostile kind in it: OSC 0/2 titles, an OSC 8 link, an OSC 52
 * clipboard write, CSI (clear screen, cursor moves, the alternate screen), SGR blink and red, and
 * C1 controls (8-bit CSI and OSC, NEL). `word` is what a person must read of it, on one line.
 */
function hostile(word: string): { text: string; seen: string } {
  const [a, b, c, d, e] = [word.slice(0, 2), word.slice(2, 4), word.slice(4, 6), word.slice(6, 8), word.slice(8)];
  const text = [
    a,
    `${ESC}]0;HOSTILE-TITLE-0${BEL}`,
    `${ESC}]2;HOSTILE-TITLE-2${ST}`,
    b,
    `${ESC}]8;;https://hostile.example/osc8${ST}`,
    c,
    `${ESC}]8;;${ST}`,
    `${ESC}]52;c;SE9TVElMRS1DTElQ${BEL}`,
    `${ESC}[2J${ESC}[H${ESC}[12;40H${ESC}[?1049h`,
    d,
    `${ESC}[5;31m`,
    e,
    `${ESC}[0m`,
    "\u009b2J\u009d2;HOSTILE-TITLE-9\u009c\u0085",
  ].join("");
  return { text, seen: word };
}

/**
 * A JSON string literal of `s` with every character escaped: typed into the shepherd's editor and
 * shown there, it holds no word of `s`, so only what the sheep wrote can put those words on screen.
 */
const opaque = (s: string) => `"${[...s].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"`;

/** Every SGR attribute drawn, without the parameters of 256-colour and RGB colours (38;5;n, 38;2;r;g;b). */
function sgrAttributes(ansi: string): Set<number> {
  const found = new Set<number>();
  for (const m of ansi.matchAll(/\u001b\[([0-9;:]*)m/g)) {
    const ps = m[1]!.split(/[;:]/).map(Number);
    for (let i = 0; i < ps.length; i++) {
      if ([38, 48, 58].includes(ps[i]!)) i += ps[i + 1] === 5 ? 2 : ps[i + 1] === 2 ? 4 : 1;
      else found.add(ps[i]!);
    }
  }
  return found;
}

describe("a hostile sheep in pi's interactive TUI", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let agentDir: string;
  let tui: TuiShepherd;
  /** The sheep's own server (the world's): a sheep's pi draws its model's raw text in its own pane, which is pi's affair, not the shepherd's. */
  let sheepTmux: PrivateTmux;
  let title = "";

  const toolDone = (args: Record<string, unknown>) => tui.toolDone(args);
  /** Everything drawn in the shepherd's pane, its scrollback included, with the attributes tmux keeps (-e). */
  const drawn = () => tui.tmux(["capture-pane", "-e", "-p", "-S", "-", "-t", tui.target]);
  const plainDrawn = async () => (await tui.tmux(["capture-pane", "-p", "-S", "-", "-t", tui.target])).replace(/[ \t]+$/gm, "");
  const paneTitle = async () => (await tui.tmux(["display-message", "-p", "-t", tui.target, "#{pane_title}"])).trim();
  const recorded = (label: string) => recordedSheep(agentDir, label);
  /** None of the hostile sequences reached the screen: no blink, no payload, the title and the clipboard untouched. */
  const assertClean = async (when: string) => {
    const ansi = await drawn();
    // pi's theme draws neither blink nor the basic red (its colours are 256-colour or RGB).
    const sgr = sgrAttributes(ansi);
    assert.ok(!sgr.has(5) && !sgr.has(6), `${when}: a sheep's blink reached the screen`);
    assert.ok(!sgr.has(31), `${when}: a sheep's red reached the screen`);
    assert.doesNotMatch(ansi, /HOSTILE-|hostile\.example|SE9TVElMRS1DTElQ/, `${when}: a sequence's payload is on screen`);
    assert.doesNotMatch(ansi, /[\u0080-\u009f]/, `${when}: a C1 control is on screen`);
    assert.equal(await paneTitle(), title, `${when}: the pane's title changed`);
    const buffers = await tui.tmux(["list-buffers", "-F", "#{buffer_sample}"]);
    assert.doesNotMatch(buffers, /HOSTILE-CLIP/, `${when}: a sheep wrote the clipboard`);
  };

  before(async () => {
    // A push starts a turn of the shepherd's model: it says a word of its own, never a sheep's text again.
    world = await e2eWorld("tui-hostile-e2e", { model: { fallback: () => "noted" }, work: true });
    ({ model, agentDir, tmux: sheepTmux } = world);
    tui = await world.tui({ width: 200, height: 50, sheepSocket: sheepTmux.socket });
    // tmux takes an application's OSC 52 into a buffer only when told to: a leak would show there.
    await tui.tmux(["set-option", "-g", "set-clipboard", "on"]);
    await tui.until(/scripted-model/);
    // pi titles its terminal once it has started; that title must be the one it keeps.
    for (let i = 0; i < 100 && !title.startsWith("π"); i++) {
      title = await paneTitle();
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(title, /^π - work$/, "pi's own title");
  });

  after(() => world?.cleanup());

  const progress = hostile("PROGRESSok");
  const question = hostile("QUESTIONok");
  const answer = hostile("ANSWERisok");

  it("its messages and answer, pushed with notify and returned by a wait, reach the screen printable; the model reads them exactly", async () => {
    await toolDone({ action: "start", agent: "echo", label: "h" });
    const { agentId } = await recorded("h");
    const message = (kind: string, text: string, more = "") => `{"name":"shepherd_message","arguments":{"kind":"${kind}","text":${opaque(text)}${more}}}`;
    const script = `#script {"delayMs":2500,"rounds":[[${message("progress", progress.text)}],[${message("question", question.text, ',"awaitReply":true,"timeout":8')}]],"afterTool":${opaque(answer.text)}}`;
    await toolDone({ action: "prompt", agentId, message: script, notify: true });
    const { activePromptId: promptId } = await recorded("h");
    assert.ok(promptId);

    // The progress line of the widget, and the notification.
    const told = await tui.until((s) => s.includes(`↳ ${progress.seen}`) && s.includes(`🐑 h reports: ${progress.seen}`), 60_000);
    assert.match(told, new RegExp(`^ {5}↳ ${progress.seen}$`, "m"), told);
    await assertClean("progress");
    // The question line of the widget, and the pushed question.
    const asked = await tui.until((s) => new RegExp(`\\? m_\\w+: ${question.seen}`).test(s) && /\? 🐑 h asks m_\w+/.test(s), 60_000);
    assert.match(asked, new RegExp(`^ {2}${question.seen}$`, "m"), `the pushed question's text:\n${asked}`);
    await assertClean("question");
    // The pushed result, once the question timed out.
    const pushed = await tui.until(new RegExp(`✓ 🐑 h ${promptId} completed[^\\n]*\\n {4}${answer.seen}\\n`), 90_000);
    assert.ok(pushed);
    await assertClean("pushed result");
    // The same result, returned by a wait.
    await toolDone({ action: "wait", promptId, timeout: 60 });
    assert.match(await plainDrawn(), new RegExp(`✓ h · echo[^\\n]*\\n {5}${answer.seen}\\n`), "the wait's result shows the answer");
    await assertClean("wait result");

    // The model got every text exactly: the pushed question and result, and the wait's result.
    assert.ok(
      model.log.some((r) => r.userTexts.some((t) => t.includes(question.text))),
      "the pushed question reached the model exactly",
    );
    assert.ok(
      model.log.some((r) => r.userTexts.some((t) => t.includes(answer.text))),
      "the pushed result reached the model exactly",
    );
    assert.ok(
      model.log.some((r) => r.toolTexts.some((t) => t.includes(answer.text))),
      "the wait's result reached the model exactly",
    );
  });

  it("collapsed, a read shows the end of the conversation (as many lines as asked), a pushed delegation each task's answer", async () => {
    const rows = Array.from({ length: 10 }, (_, i) => `ROW-${String(i + 1).padStart(2, "0")}`);
    await toolDone({ action: "prompt", agentId: "h", message: `#script {"reply":${opaque(rows.join("\n"))}}` });
    const { activePromptId: promptId } = await recorded("h");
    await toolDone({ action: "wait", promptId, timeout: 60 });

    await toolDone({ action: "read", target: "h", turns: 1 });
    const tail = rows
      .slice(-6)
      .map((r) => ` ${r}`)
      .join("\n");
    assert.match(
      await plainDrawn(),
      new RegExp(
        `The last turn of h \\(a_\\w+, echo\\), from \\S+?(?:; earlier ones are not shown)?:\\n … 5 earlier lines \\(Ctrl\\+O shows all\\)\\n${tail}\\n`,
      ),
      "the heading, then the last lines: the answer",
    );
    await toolDone({ action: "read", target: "h", turns: 1, lines: 8 });
    const eight = rows
      .slice(-8)
      .map((r) => ` ${r}`)
      .join("\n");
    assert.match(
      await plainDrawn(),
      new RegExp(`The last turn of h \\(a_\\w+, echo\\), from \\S+?(?:; earlier ones are not shown)?:\\n${eight}\\n`),
      "all 8 lines asked for",
    );

    const tasks = ["FIRSTanswer", "SECONDanswer"].map((word) => ({ agent: "echo", task: `#script {"reply":${opaque(`${word}\nits second line`)}}` }));
    await toolDone({ action: "delegate", tasks, background: true });
    const pushed = await tui.until(/🐑 background parallel 2\/2 completed d_\w+\n[\s\S]*SECONDanswer/, 90_000);
    const block = pushed.slice(pushed.lastIndexOf("🐑 background parallel"));
    assert.match(
      block,
      /^🐑 background parallel 2\/2 completed d_\w+\n✓ 1\. echo[^\n]*\n {4}FIRSTanswer\n {4}its second line\n✓ 2\. echo[^\n]*\n {4}SECONDanswer\n {4}its second line\n/,
      block,
    );
    assert.doesNotMatch(block.split("\n").slice(0, 7).join("\n"), /##|more lines/, "no markdown heading, nothing hidden");
    await assertClean("the end");
  });
});
