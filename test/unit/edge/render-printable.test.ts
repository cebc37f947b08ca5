/**
 * Everything a sheep (or its model, or an agent file) wrote is drawn printable in the TUI: the
 * call and result renderers, pushed messages, the herd widget, notifications. The model's own
 * copy keeps the exact text.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { notifyOutput } from "../../../extensions/shepherd-command.ts";
import type { HerdView } from "../../../src/core/prompts/views.ts";
import { delegateText } from "../../../src/actions/delegate-text.ts";
import { waitText } from "../../../src/texts/format.ts";
import { pushMessage } from "../../../src/edge/push-text.ts";
import { renderCallText, renderPushText, renderResultText, type Paint } from "../../../src/edge/render-text.ts";
import { herdWidgetLines } from "../../../src/texts/widget.ts";

const ESC = "\u001b";
const BEL = "\u0007";
const ST = `${ESC}\\`;
/** OSC 0/2/8/52, CSI (clear, cursor moves, private), SGR blink+red, 8-bit CSI and OSC, ESC c, DCS, APC. */
export const HOSTILE = [
  `A${ESC}]0;TITLE0${BEL}`,
  `B${ESC}]2;TITLE2${ST}`,
  `C${ESC}]8;;https://evil.example/osc8${ST}link${ESC}]8;;${ST}`,
  `D${ESC}]52;c;Y2xpcGJvYXJk${BEL}`,
  `E${ESC}[2J${ESC}[H${ESC}[10;5H${ESC}[3A${ESC}[?1049h`,
  `F${ESC}[5;31m`,
  `G${ESC}[0m`,
  "H\u009b2J",
  "I\u009d0;TITLE9\u009c",
  `J${ESC}c`,
  `K${ESC}Pq#0;2${ST}`,
  `L${ESC}_Gf=1${ST}M`,
].join("");
/** What a person reads of it. */
export const SEEN = "ABClinkDEFGHIJKLM";

const plain: Paint = { fg: (_c, s) => s, bold: (s) => s };
const tags: Paint = { fg: (c, s) => `<${c}>${s}</${c}>`, bold: (s) => `*${s}*` };

/** Nothing a terminal acts on, and none of the hostile payloads left as text. */
function assertPrintable(out: string, where: string) {
  assert.doesNotMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, `${where}: a control character is left:\n${JSON.stringify(out)}`);
  for (const payload of ["TITLE", "evil.example", "Y2xpcGJvYXJk", "2J", "5;31m"]) assert.ok(!out.includes(payload), `${where}: "${payload}" is left:\n${out}`);
}

describe("sheep-written text is drawn printable", () => {
  it("a wait's result: the answer, the label, the agent, an error (and the model's text stays exact)", () => {
    const results = [
      { promptId: "p_1", agentId: "a_1", label: `la${ESC}]0;TITLE${BEL}bel`, agent: `ag${ESC}[5;31ment`, status: "completed" as const, text: HOSTILE },
      { promptId: "p_2", agentId: "a_2", agent: "echo", status: "failed" as const, error: `[sheep_failed] ${HOSTILE}` },
    ];
    for (const expanded of [false, true]) {
      const out = renderResultText(
        { content: [{ type: "text", text: waitText(results) }], details: { action: "wait", results } },
        { expanded, isPartial: false, isError: false },
        tags,
      );
      assertPrintable(out, `wait result (expanded: ${expanded})`);
      assert.ok(out.includes(`<muted>${SEEN}</muted>`), out);
      assert.ok(out.includes("*label · agent*"), out);
      assert.ok(out.includes(`[sheep_failed] ${SEEN}`), out);
    }
    assert.ok(waitText(results).includes(HOSTILE), "the model reads the exact answer");
  });

  it("a delegate's result, its progress, and an error that quotes a sheep", () => {
    const items = [{ agent: "echo", label: `x${ESC}[2Jy`, task: "t", status: "completed" as const, text: HOSTILE, evidenceError: `[git_error] ${HOSTILE}` }];
    const out = renderResultText(
      { content: [{ type: "text", text: delegateText("single", items, "") }], details: { action: "delegate", results: items } },
      { expanded: true, isPartial: false, isError: false },
      plain,
    );
    assertPrintable(out, "delegate result");
    assert.ok(out.includes(SEEN), out);
    assert.ok(delegateText("single", items, "").includes(HOSTILE), "the model reads the exact answer");
    const progress = renderResultText(
      {
        details: {
          progress: { done: 0, total: 1, items: [{ agent: `e${ESC}]2;TITLE${BEL}cho`, label: `l${ESC}[5;31mab`, promptId: "p_1", state: "queued" }] },
        },
      },
      { expanded: false, isPartial: true, isError: false },
      plain,
    );
    assertPrintable(progress, "progress");
    assert.match(progress, /lab · echo/);
    const error = renderResultText(
      { content: [{ type: "text", text: `[unknown_agent] no sheep "${HOSTILE}"` }] },
      { expanded: false, isPartial: false, isError: true },
      tags,
    );
    assertPrintable(error, "error");
    assert.equal(error, `<error>✗ [unknown_agent] no sheep "${SEEN}"</error>`);
  });

  it("texts without results (read, messages, status, herd) are printable too; a diff's control characters are shown", () => {
    for (const action of ["read", "messages", "status", "herd", undefined]) {
      const text = `Heading\n\n${HOSTILE}\n${HOSTILE}`;
      for (const expanded of [false, true]) {
        const out = renderResultText(
          { content: [{ type: "text", text }], details: { ...(action ? { action } : {}) } },
          { expanded, isPartial: false, isError: false },
          plain,
        );
        assertPrintable(out, `${action} (expanded: ${expanded})`);
        assert.ok(out.includes(SEEN), out);
      }
    }
    const read = renderResultText(
      { content: [{ type: "text", text: "The last turn of a:\n\ncut" }], details: { action: "read", text: `> q\n${HOSTILE}` } },
      { expanded: false, isPartial: false, isError: false },
      plain,
    );
    assertPrintable(read, "read from details");
    const diff = renderResultText(
      { content: [{ type: "text", text: `+${ESC}]0;x${BEL}` }], details: { action: "diff" } },
      { expanded: true, isPartial: false, isError: false },
      plain,
    );
    assert.equal(diff, "+\\u001b]0;x\\u0007");
  });

  it("call previews: a prompt's message, a start's label, a delegate's and a chain's tasks", () => {
    const calls: Record<string, unknown>[] = [
      { action: "prompt", agentId: `a${ESC}[2J`, message: HOSTILE },
      { action: "start", agent: `echo${ESC}]0;TITLE${BEL}`, label: HOSTILE, placement: `${ESC}[5;31m` },
      { action: "wait", promptIds: [`p${ESC}[2J`], timeout: `${ESC}]2;TITLE${BEL}` },
      { action: "read", target: HOSTILE },
      { action: "delegate", agent: "echo", task: HOSTILE },
      { action: "delegate", tasks: [{ agent: HOSTILE, task: HOSTILE }] },
      {
        action: "delegate",
        chain: [
          { agent: "echo", task: HOSTILE },
          { agent: "echo", task: `${HOSTILE}\n{previous}` },
        ],
      },
      { action: `${ESC}]0;TITLE${BEL}` },
    ];
    for (const args of calls) {
      for (const expanded of [false, true]) {
        const out = renderCallText(args, plain, expanded);
        assertPrintable(out, `call ${String(args.action)} (expanded: ${expanded})`);
      }
    }
    assert.ok(renderCallText({ action: "prompt", agentId: "a", message: HOSTILE }, plain).includes(SEEN));
  });

  it("pushed results, questions and delegations: printable on screen, exact for the model", () => {
    const pushes = [
      pushMessage({ kind: "result", item: { promptId: "p_1", agentId: "a_1", status: "completed", text: HOSTILE }, label: `r${ESC}[2Jecon`, agent: "echo" }),
      pushMessage({
        kind: "result",
        item: { promptId: "p_1", agentId: "a_1", status: "failed", error: HOSTILE, text: HOSTILE },
        label: "recon",
        agent: "echo",
      }),
      pushMessage({
        kind: "question",
        agentId: "a_1",
        label: `r${ESC}]0;TITLE${BEL}econ`,
        agent: "echo",
        message: { messageId: `m_1${ESC}[5;31m`, kind: "question", text: HOSTILE, at: "x", awaitReply: true },
      }),
      pushMessage({
        kind: "delegation",
        delegationId: "d_1",
        mode: "parallel",
        items: [
          { agent: `echo${ESC}[2J`, task: "a", status: "completed", text: HOSTILE },
          { agent: "echo", task: "b", status: "failed", error: HOSTILE },
        ],
      }),
    ];
    for (const m of pushes) {
      assert.ok(m.content.includes(HOSTILE), `the model reads the exact text (${m.details.kind})`);
      for (const expanded of [false, true]) {
        const out = renderPushText(m.content, m.details, expanded, tags);
        assertPrintable(out, `push ${m.details.kind} (expanded: ${expanded})`);
        assert.ok(out.includes(SEEN), out);
      }
    }
    assertPrintable(renderPushText(`[pi-shepherd] x\n${HOSTILE}`, undefined, false, plain), "a push without details");
  });

  it("the herd widget: labels, agents, the progress line and the question line", () => {
    const herd: HerdView[] = [
      { agentId: "a_1", agent: `ag${ESC}[5;31ment`, label: `la${ESC}]2;TITLE${BEL}bel`, state: "working", progress: HOSTILE, worktree: true },
      { agentId: "a_2", agent: "echo", label: "asker", state: "blocked", asking: { messageId: `m_1${ESC}[2J`, text: HOSTILE } },
    ];
    const lines = herdWidgetLines(herd, 0, { [`echo${ESC}]0;TITLE${BEL}`]: { ready: 1, starting: 0 } })!;
    assertPrintable(lines.join("\n"), "widget");
    assert.deepEqual(lines, ["🐑 herd (2) · warm: echo 1", "  label ⎇ · agent · working", `    ↳ ${SEEN}`, "  asker · echo · blocked", `    ? m_1: ${SEEN}`]);
  });

  it("notifications: a /shepherd answer (and a sheep's message) told by ctx.ui.notify is printable", () => {
    const told: string[] = [];
    const ctx = { hasUI: true, ui: { notify: (text: string) => told.push(text) } } as unknown as Parameters<typeof notifyOutput>[0];
    notifyOutput(ctx, "read a", [{ level: "info", text: `🐑 a reports: ${HOSTILE}` }]);
    assert.deepEqual(told, [`🐑 a reports: ${SEEN}`]);
  });
});
