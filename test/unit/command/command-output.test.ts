import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { outputEntry, outputEntryOf, outputRoute, outputText, REDACTED_TOKEN } from "../../../src/command/output.ts";
import type { Paint } from "../../../src/edge/render-text.ts";

const tags: Paint = { fg: (c, s) => `<${c}>${s}</${c}>`, bold: (s) => `*${s}*` };

describe("/shepherd answers kept in the transcript", () => {
  it("go to the transcript only in pi's TUI on a pi that draws entries; RPC and an older pi get notifications", () => {
    assert.equal(outputRoute({ entryRenderers: true }, { mode: "tui", hasUI: true }), "entry");
    assert.equal(outputRoute({ entryRenderers: true }, { mode: "rpc", hasUI: true }), "notify");
    assert.equal(outputRoute({ entryRenderers: false }, { hasUI: true }), "notify", "a pi before entry renderers");
    assert.equal(outputRoute({ entryRenderers: false }, { mode: "tui", hasUI: true }), "notify");
    assert.equal(outputRoute({ entryRenderers: true }, { mode: "print", hasUI: false }), "console");
  });

  it("shows the command typed, then each answer in its level's colour", () => {
    const entry = outputEntry("", [
      { level: "info", text: "Herd (1):\n  a (a_1, echo): idle" },
      { level: "error", text: "[runtime_unavailable] no tmux" },
    ]);
    assert.equal(
      outputText(entry, false, tags),
      "<accent>*/shepherd*</accent>\nHerd (1):\n  a (a_1, echo): idle\n<error>[runtime_unavailable] no tmux</error>",
    );
  });

  it("collapses a long answer until Ctrl+O, and keeps it whole when expanded", () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n");
    const entry = outputEntry("herd", [{ level: "info", text }]);
    const collapsed = outputText(entry, false, tags).split("\n");
    assert.equal(collapsed.length, 42);
    assert.equal(collapsed.at(-1), "<dim>… 60 more lines (Ctrl+O shows all)</dim>");
    assert.equal(outputText(entry, true, tags).split("\n").length, 101);
  });

  it("collapses a read to its heading and its last lines: the answer is at the end", () => {
    const text = ["The last 3 turns of a (a_1, echo), from /s.jsonl:", "", ...Array.from({ length: 98 }, (_, i) => `line ${i}`)].join("\n");
    const collapsed = outputText(outputEntry("read a", [{ level: "info", text }]), false, tags).split("\n");
    assert.equal(collapsed.length, 42);
    assert.deepEqual(collapsed.slice(0, 3), [
      "<accent>*/shepherd read a*</accent>",
      "The last 3 turns of a (a_1, echo), from /s.jsonl:",
      "<dim>… 60 earlier lines (Ctrl+O shows all)</dim>",
    ]);
    assert.equal(collapsed.at(-1), "line 97", "the last line, where the answer is");
    assert.equal(outputText(outputEntry("read a", [{ level: "info", text }]), true, tags).split("\n").length, 101);
  });

  it("uses only the known shape of an entry read back from a session file, and draws no escape sequence", () => {
    for (const bad of [undefined, null, "text", { args: 1, notices: [] }, { args: "x" }, { args: "x", notices: "no" }]) {
      assert.equal(outputEntryOf(bad), undefined, JSON.stringify(bad));
    }
    const forged = outputEntryOf({
      args: "herd\u001b[2J",
      notices: [{ level: "info", text: "ok\u001b]0;pwned\u0007 \u202eevil" }, { level: "shout", text: "dropped" }, { text: 5 }, null],
    });
    assert.deepEqual(forged?.notices.length, 1);
    assert.equal(outputText(forged!, false, tags), "<accent>*/shepherd herd*</accent>\nok evil");
  });

  it("keeps a panel URL's token out of what goes to the session file; the copy to draw once keeps it", () => {
    const text = "Panel on: http://127.0.0.1:4242/#token=abc_DEF-123\nOpen it in a browser.";
    const kept = outputEntry("panel on", [{ level: "info", text }]);
    assert.equal(kept.notices[0]!.text, `Panel on: http://127.0.0.1:4242/${REDACTED_TOKEN}\nOpen it in a browser.`);
    assert.ok(!JSON.stringify(kept).includes("abc_DEF-123"));
    assert.equal(outputEntry("panel on", [{ level: "info", text }], true).notices[0]!.text, text);
    assert.equal(outputEntryOf({ ...kept, reveal: "0123456789abcdef0123456789abcdef" })?.reveal, "0123456789abcdef0123456789abcdef");
    assert.equal(outputEntryOf({ ...kept, reveal: "../x" })?.reveal, undefined);
  });
});
