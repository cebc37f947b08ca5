import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lastLines, withoutPiFrame } from "../../../src/texts/pi-screen.ts";

const RULE = "─".repeat(200);

describe("a sheep's screen without pi's frame", () => {
  it("keeps the conversation and drops the editor, its rules and the footer", () => {
    const pane = [
      " Warning: tmux extended-keys is off.      ",
      "",
      "",
      ' #script {"reply":"answer to first question"}      ',
      "",
      "",
      " answer to first question          ",
      " line two",
      "",
      "",
      "",
      RULE,
      "                                   ",
      RULE,
      "/tmp/work",
      "↑20 ↓18 0.0%/128k (auto)                                     scripted-model",
      "",
    ].join("\n");
    assert.equal(
      withoutPiFrame(pane),
      [" Warning: tmux extended-keys is off.", "", ' #script {"reply":"answer to first question"}', "", " answer to first question", " line two"].join("\n"),
    );
  });

  it("a working sheep's frame has its status in the upper rule", () => {
    const pane = [" working on it", "", `── ⠴ Working ${"─".repeat(100)}`, "", RULE, "/tmp/work", "↑1 ↓2"].join("\n");
    assert.equal(withoutPiFrame(pane), " working on it");
  });

  it("leaves a pane alone whose last rules are not pi's frame (pi exited, the shell went on)", () => {
    const pane = ["text", RULE, "", RULE, "footer", "[pi-shepherd] pi exited (0).", "$ ls", "a b", "$"].join("\n");
    assert.equal(withoutPiFrame(pane), pane);
  });

  it("keeps what tmux wrote under pi once pi ended", () => {
    const pane = [" pi's last words", "", RULE, "", RULE, "/tmp/work", "0.0%/128k (auto)", "Pane is dead (status 0, Tue Dec  1 02:44:35 2026)"].join("\n");
    assert.equal(withoutPiFrame(pane), " pi's last words\nPane is dead (status 0, Tue Dec  1 02:44:35 2026)");
    // Killed, pi leaves its frame up and tmux writes where the cursor was: in the editor.
    const killed = [
      " working on it",
      `── ⠹ Working ${"─".repeat(50)}`,
      "Pane is dead (signal 9, Tue Dec  1 02:44:35 2026)",
      RULE,
      "/tmp/work",
      "1.0%/128k (auto)",
    ].join("\n");
    assert.equal(withoutPiFrame(killed), " working on it\nPane is dead (signal 9, Tue Dec  1 02:44:35 2026)");
    // ... or after pi's full-width footer line, which capture-pane -J then joins to it.
    const joined = [" working on it", RULE, "", RULE, "/tmp/work", `${"1.0%/128k (auto)".padEnd(200)}Pane is dead (signal 9, x)`].join("\n");
    assert.equal(withoutPiFrame(joined), " working on it\nPane is dead (signal 9, x)");
  });

  it("lastLines keeps the end", () => {
    assert.equal(lastLines("a\nb\nc", 2), "b\nc");
    assert.equal(lastLines("a", 5), "a");
  });
});
