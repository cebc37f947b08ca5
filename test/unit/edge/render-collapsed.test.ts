/** Collapsed views show the answers: a read's tail, each task's answer, and pushed results as the foreground shows them. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { conversationText } from "../../../src/texts/format.ts";
import { pushMessage } from "../../../src/edge/push-text.ts";
import { renderPushText, renderResultText, type Paint } from "../../../src/edge/render-text.ts";

const plain: Paint = { fg: (_c, s) => s, bold: (s) => s };
const collapsed = { expanded: false, isPartial: false, isError: false };

/** A read's result as dispatch makes it: the heading and body for the model, the body in details. */
function readResult(body: string, turns = 1) {
  const conversation = { sessionPath: "/s/session.jsonl", turns: Array.from({ length: turns }, () => ({ lines: [] })) };
  const text = conversationText("beta (a_1, echo)", conversation as never, body);
  return { content: [{ type: "text", text }], details: { action: "read", source: "conversation", text: body } };
}

describe("a read, collapsed, shows the end of the conversation: the answer", () => {
  it("one short turn: the prompt and the answer, nothing hidden", () => {
    const out = renderResultText(readResult("> what is 2+2?\nfour"), collapsed, plain);
    assert.equal(out, "The last turn of beta (a_1, echo), from /s/session.jsonl:\n> what is 2+2?\nfour");
  });

  it("a long conversation: its heading, how much is earlier, then the last lines", () => {
    const body = [
      ...Array.from({ length: 14 }, (_, i) => `earlier ${i}`),
      "> the last prompt",
      "· read src/a.ts",
      "the answer line 1",
      "the answer line 2",
      "the answer line 3",
      "the answer line 4",
    ].join("\n");
    const lines = renderResultText(readResult(body, 3), collapsed, plain).split("\n");
    assert.deepEqual(lines, [
      "The last 3 turns of beta (a_1, echo), from /s/session.jsonl:",
      "… 14 earlier lines (Ctrl+O shows all)",
      "> the last prompt",
      "· read src/a.ts",
      "the answer line 1",
      "the answer line 2",
      "the answer line 3",
      "the answer line 4",
    ]);
    const expanded = renderResultText(readResult(body, 3), { ...collapsed, expanded: true }, plain);
    assert.match(expanded, /earlier 0\n[\s\S]*the answer line 4$/);
  });

  it("the lines a read asked for are all shown", () => {
    const body = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join("\n");
    const lines = renderResultText(readResult(body), { ...collapsed, lines: 8 }, plain).split("\n");
    assert.equal(lines.length, 9, lines.join("\n"));
    assert.deepEqual(lines.slice(1), body.split("\n"));
  });

  it("a screen: its last lines", () => {
    const text = Array.from({ length: 40 }, (_, i) => `row ${i}`).join("\n");
    const out = renderResultText(
      { content: [{ type: "text", text: `Screen of beta (a_1, echo):\n${text}` }], details: { action: "read", source: "screen", text } },
      collapsed,
      plain,
    );
    assert.equal(out.split("\n")[0], "Screen of beta (a_1, echo):");
    assert.ok(out.endsWith("row 34\nrow 35\nrow 36\nrow 37\nrow 38\nrow 39"), out);
  });
});

describe("pushed results read as the foreground's", () => {
  const items = [
    { agent: "scout", task: "a", status: "completed" as const, text: "found it\nin src/auth.ts", usage: { input: 10, output: 5 } },
    { agent: "worker", task: "b", status: "failed" as const, error: "[provider_error] down" },
    { agent: "scout", task: "c", status: "completed" as const, text: "the third answer" },
  ];

  it("a background delegation: a block per task with its answer, no markdown headings", () => {
    const m = pushMessage({ kind: "delegation", delegationId: "d_1", mode: "parallel", items });
    const out = renderPushText(m.content, m.details, false, plain);
    assert.equal(
      out,
      [
        "🐑 background parallel 2/3 completed d_1",
        "✓ 1. scout ↑10 ↓5",
        "    found it",
        "    in src/auth.ts",
        "✗ 2. worker",
        "    [provider_error] down",
        "✓ 3. scout",
        "    the third answer",
      ].join("\n"),
    );
    assert.doesNotMatch(out, /##|more lines/);
    // The foreground draws the same blocks for the same tasks.
    const foreground = renderResultText({ details: { action: "delegate", results: items } }, collapsed, plain);
    assert.equal(foreground.split("\n").slice(1).join("\n").replace(/\d\. /g, ""), out.split("\n").slice(1).join("\n").replace(/\d\. /g, ""));
  });

  it("a chain's steps, numbered by step", () => {
    const chain = items.slice(0, 1).map((i) => ({ ...i, step: 1 }));
    const m = pushMessage({ kind: "delegation", delegationId: "d_2", mode: "chain", items: chain });
    assert.equal(
      renderPushText(m.content, m.details, false, plain),
      "🐑 background chain 1/1 completed d_2\n✓ 1. scout ↑10 ↓5\n    found it\n    in src/auth.ts",
    );
  });

  it("a pushed result: its answer's first lines, not the model's preamble", () => {
    const m = pushMessage({
      kind: "result",
      item: { promptId: "p_1", agentId: "a_1", status: "completed", text: "one\ntwo\nthree\nfour\nfive" },
      label: "recon",
      agent: "scout",
    });
    assert.equal(renderPushText(m.content, m.details, false, plain), "✓ 🐑 recon p_1 completed\n    one\n    two\n    three\n    … 2 more lines");
    assert.ok(renderPushText(m.content, m.details, true, plain).endsWith("    four\n    five"));
  });
});
