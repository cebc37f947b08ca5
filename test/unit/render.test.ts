import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pushMessage } from "../../src/tool/push-text.js";
import { renderCallText, renderPushText, renderResultText, type Paint } from "../../src/tool/render-text.js";
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

  it("shows isolation, worktree removal and squash", () => {
    assert.equal(renderCallText({ action: "start", agent: "worker", isolate: true }, plain), "shepherd start worker ⎇ isolated");
    assert.equal(renderCallText({ action: "close", agentId: "a_1", removeWorktree: true, force: true }, plain), "shepherd close a_1 (remove worktree, force)");
    assert.equal(renderCallText({ action: "land", agentId: "a_1", squash: true }, plain), "shepherd land a_1 (squash)");
    assert.equal(renderCallText({ action: "diff", target: "recon" }, plain), "shepherd diff recon");
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

  const evidence = {
    baseline: { root: "/r", tree: "t", takenAt: "2026-01-01T00:00:00Z" },
    after: "u",
    afterAt: "2026-01-01T00:00:01Z",
    files: [
      { path: "src/a.ts", status: "modified", insertions: 10, deletions: 3 },
      { path: "evil\u001b[2Jname.txt", status: "added", insertions: 2, deletions: 0 },
    ],
    fileCount: 4,
    insertions: 12,
    deletions: 3,
    patchPath: "/state/sheep/a_1/evidence/p_1.patch",
    patch: "",
    truncated: true,
    shared: false,
  };
  const withEvidence = {
    content: [{ type: "text", text: "done" }],
    details: {
      action: "delegate",
      results: [
        { agent: "worker", status: "completed", text: "did it", evidence, worktree: { branch: "shepherd/worker-0123456789" } },
        { agent: "scout", status: "completed", text: "looked", evidence: { ...evidence, files: [], fileCount: 0, insertions: 0, deletions: 0 } },
        { agent: "other", status: "completed", text: "hm", evidenceError: "[git_error] git add failed" },
      ],
    },
  };

  it("collapsed: what each sheep changed at a glance", () => {
    const text = renderResultText(withEvidence, { expanded: false, isPartial: false, isError: false }, plain);
    assert.match(text, /^✓ worker \+12 −3 in 4 files ⎇ shepherd\/worker-0123456789$/m);
    assert.match(text, /^✓ scout no changes$/m);
    assert.match(text, /^✓ other no evidence$/m);
    assert.doesNotMatch(text, /src\/a\.ts/, "the file list waits for Ctrl+O");
  });

  it("expanded: the file list, where the patch is, and never a raw escape from a file name", () => {
    const text = renderResultText(withEvidence, { expanded: true, isPartial: false, isError: false }, plain);
    assert.match(text, /^ {4}modified {3}src\/a\.ts \+10 −3$/m);
    assert.match(text, /^ {4}added {6}"evil\\u001b\[2Jname\.txt" \+2 −0$/m);
    assert.match(text, /^ {4}… 2 more files$/m);
    assert.match(text, /^ {4}patch: \/state\/sheep\/a_1\/evidence\/p_1\.patch$/m);
    assert.match(text, /^ {4}\[git_error\] git add failed$/m);
    assert.doesNotMatch(text, /\u001b/);
  });

  it("a diff's text reaches the terminal with its control characters made visible", () => {
    const text = renderResultText(
      { content: [{ type: "text", text: "+\u001b]0;owned\u0007 line" }], details: { action: "diff" } },
      { expanded: true, isPartial: false, isError: false },
      plain,
    );
    assert.equal(text, "+\\u001b]0;owned\\u0007 line");
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

const base: AgentStatus = {
  agentId: "a_1",
  agent: "scout",
  label: "recon",
  runtime: "tmux",
  state: "working",
  paneAlive: true,
  createdAt: "2026-01-01T00:00:00Z",
};

describe("herd widget", () => {
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
  it("marks a sheep that works in a worktree of its own", () => {
    const worktree = { path: "/w/a_1", branch: "shepherd/recon-1", repoRoot: "/r", base: "0".repeat(40), leftBehind: 0 };
    assert.deepEqual(herdWidgetLines([{ ...base, state: "idle", worktree }], 0), ["🐑 herd (1)", "  recon ⎇ · scout · idle"]);
  });
  it("is removed when the herd is empty", () => {
    assert.equal(herdWidgetLines([{ ...base, state: "closed" }], 0), undefined);
  });
});

describe("the async herd in the TUI", () => {
  const status = base;

  it("the widget counts results still on their way, and shows a question or the latest progress", () => {
    const lines = herdWidgetLines(
      [
        { ...status, promptSubmittedAt: "2026-01-01T00:00:00Z", queued: ["p_2", "p_3"], undelivered: 1, progress: "read 40 files\nof 80" },
        { ...status, agentId: "a_2", label: "asker", state: "blocked", asking: { messageId: "m_1", text: "north or south?" } },
      ],
      Date.parse("2026-01-01T00:00:05Z"),
    );
    assert.deepEqual(lines, [
      "🐑 herd (2)",
      "  recon · scout · working 5s +2 queued · 🔔 1 to report",
      "    ↳ read 40 files of 80",
      "  asker · scout · blocked",
      "    ? m_1: north or south?",
    ]);
  });

  it("a pushed result, question and delegation read as what they are, in three lines until expanded", () => {
    const item = { promptId: "p_1", agentId: "a_1", status: "completed" as const, text: "one\ntwo\nthree\nfour" };
    const result = pushMessage({ kind: "result", item, label: "recon", agent: "scout" });
    assert.match(result.content, /^\[pi-shepherd\] Result of p_1 from sheep "recon" \(a_1\): completed\.\n/);
    assert.ok(result.content.endsWith("\none\ntwo\nthree\nfour"), "the exact text, last");
    assert.equal(renderPushText(result.content, result.details, false, plain).split("\n")[0], "✓ 🐑 recon p_1 completed");
    assert.equal(renderPushText(result.content, result.details, false, plain).split("\n").length, 5, "head, three lines, and how many more");
    assert.ok(renderPushText(result.content, result.details, true, plain).includes("  four"));

    const question = pushMessage({
      kind: "question",
      agentId: "a_1",
      label: "recon",
      agent: "scout",
      message: { messageId: "m_1", kind: "question", text: "Which gate?", at: "x", awaitReply: true, timeoutSec: 60 },
    });
    assert.match(
      question.content,
      /^\[pi-shepherd\] Sheep "recon" \(a_1\) asks \(m_1\):\nWhich gate\?\nIt waits for your answer \(for up to 60 s\)\. Answer with \{"action":"reply","agentId":"a_1","messageId":"m_1","text":"\.\.\."\}/,
    );
    assert.equal(renderPushText(question.content, question.details, false, plain).split("\n")[0], "? 🐑 recon asks m_1 (waits for a reply)");

    const delegation = pushMessage({
      kind: "delegation",
      delegationId: "d_1",
      mode: "parallel",
      items: [
        { agent: "scout", task: "a", status: "completed", text: "found it" },
        { agent: "worker", task: "b", status: "failed", error: "[provider_error] down" },
      ],
    });
    assert.match(
      delegation.content,
      /^\[pi-shepherd\] Background parallel delegation d_1 is done\.\n\nParallel: 1\/2 succeeded\.\n\n## 1\. scout · completed\nfound it\n\n## 2\. worker · failed\nfailed: \[provider_error\] down$/,
    );
    assert.equal(
      renderPushText(delegation.content, delegation.details, false, tags).split("\n")[0],
      "<toolTitle>*🐑 background parallel*</toolTitle> <warning>1/2 completed</warning> <muted>d_1</muted>",
    );
  });

  it("a pushed text is bounded for the model like a tool result; details keep all of it", () => {
    const long = "x".repeat(60_000);
    const m = pushMessage({ kind: "result", item: { promptId: "p_1", agentId: "a_1", status: "completed", text: long }, label: "l", agent: "a" });
    assert.ok(m.content.length < 51_000);
    assert.match(m.content, /\[\.\.\. \d+ more characters; the full text is in the details/);
    assert.equal(m.details.kind === "result" && m.details.item.text, long);
  });
});
