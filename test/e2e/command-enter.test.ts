/**
 * A person at pi's interactive screen (a real pi shepherd in a private tmux server, read with
 * capture-pane): every /shepherd subcommand that help lists runs on ONE Enter (issue 21, item 12),
 * and a person prompts a sheep and waits for it without the model, Escape stopping a wait (item 15).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SUBCOMMANDS } from "../../src/command/parse.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("/shepherd in pi's interactive TUI: one Enter runs a whole command", { timeout: 900_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let tui: TuiShepherd;

  before(async () => {
    world = await e2eWorld("enter-e2e", { work: true });
    model = world.model;
    tui = await world.tui({ width: 200, height: 50 });
    await tui.until(/scripted-model/);
  });

  after(() => world?.cleanup());

  /** Until pi's editor shows this text (typed keys are drawn a moment later). */
  const untilEditor = async (text: string) => {
    const end = Date.now() + 10_000;
    while (!(await tui.editorText()).includes(text)) {
      if (Date.now() > end) throw new Error(`the editor never showed "${text}":\n${await tui.screen()}`);
      await sleep(150);
    }
  };

  /** The screen, once two looks a moment apart agree: the completion menu has had its say. */
  const settled = async () => {
    let last = await tui.screen();
    for (let i = 0; i < 40; i++) {
      await sleep(400);
      const now = await tui.screen();
      if (now === last) return now;
      last = now;
    }
    return last;
  };

  /**
   * Types `/shepherd <args>` as a person does, waits until the editor shows it and its menu (if
   * any) is drawn, presses Enter once, and returns the screen once the answer stands under the
   * command in the transcript. The editor holding the command after that one Enter is the failure.
   */
  const once = async (args: string, answer: RegExp = /\S/, ms = 60_000) => {
    const text = `/shepherd ${args}`;
    await tui.keys("-l", text);
    await untilEditor(text);
    await settled();
    await tui.keys("Enter");
    // The entry: the command as typed, then its first line of answer (the editor's copy is followed by its rule).
    const entry = new RegExp(`^ ?${escapeRe(text)}\\n ?(?!─)(.*)`, "m");
    const screen = await tui
      .until((s) => {
        const m = entry.exec(s);
        return m !== null && answer.test(s.slice(m.index));
      }, ms)
      .catch(async (e: Error) => {
        throw new Error(`"${text}" did not run on one Enter; the editor holds "${await tui.editorText()}".\n${e.message}`);
      });
    assert.equal(await tui.editorText(), "", `the editor is empty after "${text}"`);
    return screen;
  };

  it("every subcommand of the help runs on one Enter, with a sheep where it takes one; a person prompts the sheep and waits for its answer", async () => {
    // Each subcommand help lists, in an order where each finds what it needs (a sheep, an answer, a closed sheep).
    const plan: [sub: string, args: string, answer?: RegExp][] = [
      ["help", "help", /\/shepherd <subcommand> \(no argument: the herd and the few most used\)/],
      ["herd", "herd", /No live sheep\./],
      ["sheep", "sheep", /Agent definitions \(scope /],
      ["sheep", "agents", /Agent definitions \(scope /],
      ["settings", "settings", /Settings in effect:/],
      ["doctor", "doctor"],
      ["start", "start echo", /Started "echo" \(echo\) as a_\w{10}/],
      ["status", "status echo", /echo \(a_\w{10}, echo\): idle/],
      ["prompt", "prompt echo tell me, what's new?", /Prompt p_\w{10} sent to a_\w{10}; the sheep is working on it[^\n]*\n ?Its answer: \/shepherd wait echo/],
      // The scripted model's answer, through the tool's own wait: the model of the shepherd took no turn.
      ["wait", "wait echo", /## echo \(a_\w{10}\) · completed · p_\w{10}\n ?ECHO: tell me, what's new\?/],
      ["wait", "wait", /No sheep has a prompt pending\./],
      ["interrupt", "interrupt echo", /\[not_working\]/],
      ["panel", "panel url"],
      ["read", "read echo", /tell me, what's new\?/],
      ["diff", "diff echo"],
      ["land", "land echo"],
      ["sync", "sync echo"],
      ["messages", "messages echo"],
      ["reply", "reply echo m_0000000000 yes"],
      ["log", "log", /Audit log, last \d+/],
      ["trust", "trust"],
      ["prune", "prune"],
      ["close", "close echo", /Closed echo \(a_\w{10}\)/],
      ["close", "close echo", /echo \(a_\w{10}\) was already closed\./],
      ["resume", "resume echo", /Resumed "echo" \(echo\) from a_\w{10}/],
    ];
    const covered = new Set(plan.map(([sub]) => sub));
    for (const s of SUBCOMMANDS) assert.ok(covered.has(s.name), `the screen test types /shepherd ${s.name}`);
    // The shepherd's pi is the one with the shepherd tool; a sheep has none.
    const shepherdTurns = () => model.log.filter((l) => l.toolNames.includes("shepherd")).length;
    const before = shepherdTurns();
    for (const [sub, args, answer] of plan) {
      if (!SUBCOMMANDS.some((s) => s.name === sub)) continue; // a subcommand this tree does not have yet
      await once(args, answer, sub === "wait" || sub === "start" || sub === "resume" ? 120_000 : 60_000);
    }
    assert.ok(
      model.log.some((l) => l.lastUserText === "tell me, what's new?" && l.replyText === "ECHO: tell me, what's new?"),
      "the sheep's model got the person's words as typed",
    );
    assert.equal(shepherdTurns(), before, "the shepherd's own model took no turn: nobody typed to it");
  });

  it("a /shepherd wait shows its progress and Escape stops it; the prompt stays pending", async () => {
    await once(`prompt echo ${directive({ reply: "late answer", delayMs: 60_000 })}`, /Prompt p_\w{10} sent to a_\w{10}/);
    await tui.keys("-l", "/shepherd wait echo");
    await untilEditor("/shepherd wait echo");
    await settled();
    await tui.keys("Enter");
    await tui.until(/🐑 waiting 0\/1: echo · working · Escape stops waiting/);
    await tui.keys("Escape");
    await tui.until(/^ ?\/shepherd wait echo\n ?\[aborted\] the wait was cancelled; the prompts are still pending/m);
    const after = await settled();
    assert.doesNotMatch(after, /Escape stops waiting/, "the progress line went with the wait");
    await once("status echo", /echo \(a_\w{10}, echo\): working, working on p_\w{10}/);
  });

  it("a person's prompt is the person's: its question comes to the transcript, not the model; its answer, in before the wait, is announced and shown by /shepherd wait (issue 31, items 16, 18)", async () => {
    const shepherdTurns = () => model.log.filter((l) => l.toolNames.includes("shepherd")).length;
    const before = shepherdTurns();
    await once("start echo --label asker", /Started "asker" \(echo\) as a_\w{10}/, 120_000);
    const ask = directive({ tool: { name: "shepherd_message", arguments: { kind: "question", text: "north or south?" } }, afterTool: "asked and done" });
    await once(`prompt asker ${ask}`, /Prompt p_\w{10} sent to a_\w{10}/);
    // Both come while nobody waits: the question to the person, then the finish; the answer stays unseen.
    await tui.until(/asker \(a_\w{10}\) asks you \(m_\w{10}\):\n ?north or south\?\n ?Answer it: \/shepherd reply asker m_\w{10}/, 60_000);
    await tui.until(/asker \(a_\w{10}\) finished your prompt p_\w{10}: completed\. Its answer: \/shepherd wait asker/, 60_000);
    await once("wait asker", /## asker \(a_\w{10}, echo\) · completed · p_\w{10}\n ?asked and done/);
    await once("wait asker", /asker has no prompt pending\./);
    assert.equal(shepherdTurns(), before, "the shepherd's model took no turn for the person's sheep's question");
  });
});
