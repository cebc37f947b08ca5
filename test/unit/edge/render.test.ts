import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pushMessage } from "../../../src/edge/push-text.ts";
import { renderCallText, renderPushText, renderResultText, type Paint } from "../../../src/edge/render-text.ts";
import { herdWidgetLines } from "../../../src/texts/widget.ts";
import type { SheepView } from "../../../src/ports/types.ts";
import type { HerdView } from "../../../src/core/prompts/views.ts";

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

  it("keeps {previous} in a chain's preview: it is where the step before's answer goes", () => {
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
    assert.equal(text, "shepherd delegate chain (2 steps) \n  1. scout find it\n  2. worker fix {previous} now");
  });

  it("expanded (Ctrl+O): every task whole, line by line; collapsed: three, one line each", () => {
    const long = `${"word ".repeat(30)}end\nsecond line {previous}`;
    const args = { action: "delegate", tasks: [1, 2, 3, 4].map((n) => ({ agent: `a${n}`, task: `${n}: ${long}` })) };
    const collapsed = renderCallText(args, plain);
    assert.equal(collapsed.split("\n").length, 5, collapsed);
    assert.match(collapsed, /\n {2}1\. a1 1: word word .*…\n/);
    assert.match(collapsed, /\n {2}… 1 more$/);
    const expanded = renderCallText(args, plain, true);
    for (const n of [1, 2, 3, 4]) assert.ok(expanded.includes(`\n  ${n}. a${n} ${n}: ${"word ".repeat(30)}end\n     second line {previous}`), expanded);
    assert.doesNotMatch(expanded, /…|more/);
    const prompt = renderCallText({ action: "prompt", agentId: "recon", message: long }, plain, true);
    assert.ok(prompt.endsWith(`${"word ".repeat(30)}end\n  second line {previous}`), prompt);
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
          agentId: "a_1",
          label: "recon",
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
    assert.match(text, /<success>✓<\/success> \*recon · scout\*<dim> ↑120 ↓45 \$0\.0012<\/dim>/, "the sheep, not the prompt id");
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

  it("partial: each item as the widget shows its sheep, its clock read at the moment of drawing", () => {
    const text = renderResultText(
      {
        details: {
          progress: {
            done: 1,
            total: 3,
            items: [
              { agent: "scout", label: "s1", agentId: "a_1", state: "completed", since: "2026-01-01T00:00:00Z" },
              { agent: "worker", label: "worker", agentId: "a_2", state: "working", since: "2026-01-01T00:00:30Z" },
              { agent: "worker", state: "queued" },
            ],
          },
        },
      },
      { expanded: false, isPartial: true, isError: false, now: Date.parse("2026-01-01T00:00:42Z") },
      plain,
    );
    assert.equal(text, "1/3 done\n✓ s1 · scout · completed\n⏳ worker · working 12s\n· worker · queued");
  });

  it("partial: an unfinished item follows its sheep's live view, so it agrees with the widget between reports", () => {
    const view: SheepView = { agentId: "a_2", agent: "echo", label: "echo-2", state: "working", since: "2026-01-01T00:00:02Z" };
    const now = Date.parse("2026-01-01T00:00:09Z");
    const text = renderResultText(
      {
        details: {
          progress: {
            done: 0,
            total: 2,
            items: [
              { promptId: "p_1", agentId: "a_2", label: "echo-2", agent: "echo", state: "starting", since: "2026-01-01T00:00:01Z" },
              { promptId: "p_2", state: "waiting" },
            ],
          },
        },
      },
      { expanded: false, isPartial: true, isError: false, now, live: (id) => (id === "a_2" ? view : undefined) },
      plain,
    );
    assert.equal(text, "0/2 done\n⏳ echo-2 · echo · working 7s\n⏳ p_2 · waiting");
    assert.equal(herdWidgetLines([view], now)![1], "  echo-2 · echo · working 7s", "the widget says the same");
  });

  it("results name their sheep by label and agent, and say a reason shared by several once", () => {
    const text = renderResultText(
      {
        details: {
          action: "delegate",
          results: [
            { agent: "echo", label: "echo", status: "completed", text: "one" },
            { agent: "echo", label: "echo-2", status: "cancelled", error: "[cancelled] the delegation was aborted." },
            { agent: "echo", label: "echo-3", status: "cancelled", error: "[cancelled] the delegation was aborted." },
          ],
        },
      },
      { expanded: false, isPartial: false, isError: false },
      plain,
    );
    assert.equal(text, "1/3 completed\n✓ echo\n    one\n⊘ echo-2 · echo, echo-3 · echo\n    [cancelled] the delegation was aborted.");
  });
});

describe("herd widget", () => {
  const base: HerdView = { agentId: "a_1", agent: "scout", label: "recon", state: "working" };
  it("lists live sheep with the clock of their state; a label that is the agent's name is said once", () => {
    const lines = herdWidgetLines(
      [
        { ...base, since: "2026-01-01T00:00:00Z" },
        { ...base, agentId: "a_2", label: "w", agent: "worker", state: "idle" },
        { ...base, agentId: "a_3", label: "scout", state: "starting", since: "2026-01-01T00:00:40Z" },
      ],
      Date.parse("2026-01-01T00:00:42Z"),
    );
    assert.deepEqual(lines, ["🐑 herd (3)", "  recon · scout · working 42s", "  w · worker · idle", "  scout · starting 2s"]);
  });
  it("marks a sheep that works in a worktree of its own", () => {
    assert.deepEqual(herdWidgetLines([{ ...base, state: "idle", worktree: true }], 0), ["🐑 herd (1)", "  recon ⎇ · scout · idle"]);
    assert.deepEqual(herdWidgetLines([{ ...base, label: "scout", state: "idle", worktree: true }], 0), ["🐑 herd (1)", "  scout ⎇ · idle"]);
  });
  it("marks a sandboxed sheep (issue 33), beside the worktree's mark", () => {
    assert.deepEqual(herdWidgetLines([{ ...base, state: "idle", sandboxed: true }], 0), ["🐑 herd (1)", "  recon 🔒 · scout · idle"]);
    assert.deepEqual(herdWidgetLines([{ ...base, label: "scout", state: "idle", worktree: true, sandboxed: true }], 0), ["🐑 herd (1)", "  scout ⎇ 🔒 · idle"]);
  });
  it("is removed when the herd is empty", () => {
    assert.equal(herdWidgetLines([{ ...base, state: "closed" }], 0), undefined);
    assert.equal(herdWidgetLines([], 0, { echo: { ready: 0, starting: 0 } }), undefined, "an empty pool keeps it away too");
  });
  it("counts the warm pool on its first line, and stays for a pool alone", () => {
    const warm = { echo: { ready: 2, starting: 0 }, scout: { ready: 0, starting: 1 }, idle: { ready: 0, starting: 0 } };
    assert.deepEqual(herdWidgetLines([], 0, warm), ["🐑 herd (0) · warm: echo 2, scout 0 (+1 starting)"]);
    assert.equal(herdWidgetLines([{ ...base, state: "idle" }], 0, warm)![0], "🐑 herd (1) · warm: echo 2, scout 0 (+1 starting)");
  });
});

describe("the async herd in the TUI", () => {
  const status: HerdView = { agentId: "a_1", agent: "scout", label: "recon", state: "working" };

  it("the widget counts results still on their way, and shows a question or the latest progress", () => {
    const lines = herdWidgetLines(
      [
        { ...status, since: "2026-01-01T00:00:00Z", queued: 2, undelivered: 1, progress: "read 40 files\nof 80" },
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
