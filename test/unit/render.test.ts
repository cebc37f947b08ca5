import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderCallText, renderResultText, type Paint } from "../../src/tool/render-text.js";
import { herdWidgetLines } from "../../src/tool/widget-text.js";
import type { AgentStatus } from "../../src/core/types.js";

/** Colours become visible tags, so a test can tell an error from a success. */
const tags: Paint = { fg: (c, s) => `<${c}>${s}</${c}>`, bold: (s) => `*${s}*` };
const plain: Paint = { fg: (_c, s) => s, bold: (s) => s };

describe("renderCall", () => {
  it("shows one compact line with the action and its key arguments", () => {
    assert.equal(renderCallText({ action: "start", agent: "scout", label: "recon" }, plain), "shepherd start scout as recon");
    assert.equal(
      renderCallText(
        { action: "prompt", agentId: "a_1", message: "Look\n  at   the auth flow and report everything you find about tokens, sessions and cookies" },
        plain,
      ),
      "shepherd prompt a_1 Look at the auth flow and report everything you find about …",
    );
    assert.equal(
      renderCallText({ action: "wait", promptIds: ["p_1", "p_2", "p_3", "p_4"], timeout: 30 }, plain),
      "shepherd wait p_1, p_2, p_3 +1 (timeout 30s)",
    );
  });

  it("previews delegate tasks without {previous}", () => {
    const text = renderCallText(
      {
        action: "delegate",
        chain: [
          { agent: "scout", task: "find it" },
          { agent: "worker", task: "fix {previous} now" },
        ],
      },
      plain,
    );
    assert.equal(text, "shepherd delegate chain (2 steps) \n  1. scout find it\n  2. worker fix now");
  });
});

describe("renderResult", () => {
  const results = {
    content: [{ type: "text", text: "2 results" }],
    details: {
      action: "wait",
      results: [
        {
          promptId: "p_1",
          agent: "scout",
          status: "completed",
          text: "line 1\nline 2\nline 3\nline 4\nline 5",
          usage: { input: 120, output: 45, cost: 0.0012 },
        },
        { promptId: "p_2", agent: "worker", status: "failed", error: "[provider_error] 500 boom" },
      ],
    },
  };

  it("collapsed: an icon per result, the first lines of each text, usage when known", () => {
    const text = renderResultText(results, { expanded: false, isPartial: false, isError: false }, tags);
    assert.ok(text.startsWith("<warning>1/2 completed</warning>"));
    assert.match(text, /<success>✓<\/success> \*scout\*<dim> ↑120 ↓45 \$0\.0012<\/dim>/);
    assert.match(text, /line 3<\/muted>\n {4}<dim>… 2 more lines<\/dim>/);
    assert.doesNotMatch(text, /line 4/);
    assert.match(text, /<error>✗<\/error> \*worker\*\n {4}<error>\[provider_error\] 500 boom<\/error>/);
  });

  it("expanded: every full text", () => {
    const text = renderResultText(results, { expanded: true, isPartial: false, isError: false }, plain);
    assert.match(text, /line 4\n {4}line 5/);
    assert.doesNotMatch(text, /more lines/);
  });

  it("errors look like errors", () => {
    const text = renderResultText(
      { content: [{ type: "text", text: "[unknown_agent] no sheep" }] },
      { expanded: false, isPartial: false, isError: true },
      tags,
    );
    assert.equal(text, "<error>✗ [unknown_agent] no sheep</error>");
  });

  it("partial: the count and each item's state and elapsed seconds", () => {
    const text = renderResultText(
      {
        details: {
          progress: {
            done: 1,
            total: 2,
            items: [
              { agent: "scout", label: "s1", state: "completed", elapsedSec: 3 },
              { agent: "worker", state: "working", elapsedSec: 12 },
            ],
          },
        },
      },
      { expanded: false, isPartial: true, isError: false },
      plain,
    );
    assert.equal(text, "1/2 done\n✓ s1 completed 3s\n⏳ worker working 12s");
  });
});

describe("herd widget", () => {
  const base: AgentStatus = {
    agentId: "a_1",
    agent: "scout",
    label: "recon",
    runtime: "tmux",
    state: "working",
    paneAlive: true,
    createdAt: "2026-01-01T00:00:00Z",
  };
  it("lists live sheep with the elapsed time of the current prompt", () => {
    const lines = herdWidgetLines(
      [
        { ...base, promptSubmittedAt: "2026-01-01T00:00:00Z" },
        { ...base, agentId: "a_2", label: "w", agent: "worker", state: "idle" },
      ],
      Date.parse("2026-01-01T00:00:42Z"),
    );
    assert.deepEqual(lines, ["🐑 herd (2)", "  recon · scout · working 42s", "  w · worker · idle"]);
  });
  it("is removed when the herd is empty", () => {
    assert.equal(herdWidgetLines([{ ...base, state: "closed" }], 0), undefined);
  });
});
