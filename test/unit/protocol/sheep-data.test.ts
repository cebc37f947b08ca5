/**
 * Fields a sheep writes are checked and bounded where they are read (issue 31, item 1): counts are
 * finite numbers in range or dropped, times are real instants clamped to when a sheep could have
 * written them, strings are bounded; a remote host's answer gets the same bounds as a local read.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AHEAD_MS, countOf, EARLIEST_MS, headBytes, MAX_RESULT_BYTES, stringOf, timeOf, usageOf } from "../../../src/domain/sheep-data.ts";
import { sheepResultOf } from "../../../src/ports/sheep-result.ts";
import { sheepDir, sheepLayout } from "../../../src/protocol/layout.ts";
import { parseMessageLog } from "../../../src/protocol/message-log.ts";
import type { RemoteCall } from "../../../src/remote/rpc/call.ts";
import { remotePorts } from "../../../src/remote/rpc/ports.ts";
import { testSheepFiles } from "../../support/local-sheep-files.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const P = "p_0123456789";

describe("sheep data: the validators", () => {
  it("a count is a finite number in range, else dropped", () => {
    assert.equal(countOf(5), 5);
    assert.equal(countOf(0), 0);
    for (const bad of ["5", "x".repeat(100), Number.NaN, Number.POSITIVE_INFINITY, -1, 1e13, null, {}, [3]]) assert.equal(countOf(bad), undefined, String(bad));
    assert.equal(countOf(2e6, 1e6), undefined);
  });

  it("usage keeps only its counts in range (cost at most 1e6); nothing left is no usage", () => {
    assert.deepEqual(usageOf({ input: 10, output: "0<img src=x>", cacheRead: -3, totalTokens: Number.POSITIVE_INFINITY, cost: Number.NaN, extra: 5 }), {
      input: 10,
    });
    assert.deepEqual(usageOf({ input: 1, cost: 0.5 }), { input: 1, cost: 0.5 });
    assert.equal(usageOf({ cost: 2e6 }), undefined);
    assert.equal(usageOf({ input: "x".repeat(8 * 1024 * 1024) }), undefined);
    assert.equal(usageOf("usage"), undefined);
  });

  it("a time is an ISO instant clamped to [2000-01-01, now + 1 day]; text that is no time is none", () => {
    assert.equal(timeOf("2026-06-01T11:00:00.000Z", NOW), "2026-06-01T11:00:00.000Z");
    assert.equal(timeOf(new Date(-271821, 3, 20).toISOString(), NOW), new Date(EARLIEST_MS).toISOString());
    assert.equal(timeOf("+275760-09-13T00:00:00.000Z", NOW), new Date(NOW + AHEAD_MS).toISOString());
    for (const bad of ["yesterday", "", "2".repeat(3.5 * 1024 * 1024), 5, null]) assert.equal(timeOf(bad, NOW), undefined);
  });

  it("strings are cut at their bound; a text's head in bytes never splits a character", () => {
    assert.equal(stringOf("abc", 10), "abc");
    assert.equal(stringOf("abcdef", 4), "abc…");
    assert.equal(stringOf(5, 4), undefined);
    assert.equal(headBytes("ééé", 3), "é");
    assert.equal(Buffer.byteLength(headBytes("€".repeat(1000), 1000)), 999);
    assert.equal(headBytes("short", 100), "short");
  });
});

describe("sheep data: a result, wherever it was read", () => {
  it("hostile fields are dropped or clamped; the answer and the known fields stay", () => {
    const r = sheepResultOf(
      {
        status: "completed",
        text: "fine",
        usage: { input: "x".repeat(1000), output: 7, cost: "00.011e400" },
        startedAt: new Date(-271821, 3, 20).toISOString(),
        finishedAt: "+275760-09-13T00:00:00.000Z",
        model: "m".repeat(10_000),
        stopReason: "s".repeat(10_000),
        steered: ["s_0123456789", "../x", 5],
        refused: { code: "result_too_large", reason: "forged" },
      },
      P,
      NOW,
    );
    assert.ok(r);
    assert.equal(r.text, "fine");
    assert.deepEqual(r.usage, { output: 7 });
    assert.equal(r.startedAt, new Date(EARLIEST_MS).toISOString());
    assert.equal(r.finishedAt, new Date(NOW + AHEAD_MS).toISOString());
    assert.ok(r.model!.length <= 256 && r.stopReason!.length <= 256);
    assert.deepEqual(r.steered, ["s_0123456789"]);
    assert.equal(r.refused, undefined, "refused is the host's word, never the sheep's");
  });

  it("a text past what a result file may hold is refused, as a file past it is", () => {
    const r = sheepResultOf({ status: "completed", text: "y".repeat(MAX_RESULT_BYTES + 1) }, P);
    assert.equal(r?.refused?.code, "result_too_large");
    assert.equal(r?.text, "");
  });

  it("a remote host's answer gets the same bounds as a local read", async () => {
    const answers: Record<string, unknown> = {
      "files.result": { promptId: P, status: "completed", text: "z".repeat(MAX_RESULT_BYTES + 10), usage: { input: "8 MiB" } },
      "files.messages": [
        { messageId: "m_0123456789", kind: "progress", text: "ok", at: "2".repeat(1024 * 1024) },
        { messageId: "m_abcdefghij", kind: "progress", text: "fine", at: "+275760-09-13T00:00:00.000Z" },
      ],
      "files.snapshot": { ready: { pid: 5, readyAt: new Date(-271821, 3, 20).toISOString() }, blocked: "b".repeat(100_000) },
    };
    const call: RemoteCall = {
      call: async (method) => answers[method],
      onEvent: () => () => undefined,
      onReconnect: () => () => undefined,
    };
    const { files: host } = remotePorts(call, { host: "h", runtime: "tmux" });
    const r = await host.result("a_0123456789", P);
    assert.equal(r?.refused?.code, "result_too_large", "no 16 MiB and more of a host's answer is taken");
    answers["files.result"] = { promptId: P, status: "completed", text: "ok", usage: { input: "8 MiB", output: 3 } };
    assert.deepEqual((await host.result("a_0123456789", P))?.usage, { output: 3 });
    const messages = await host.messages("a_0123456789");
    assert.deepEqual(
      messages.map((m) => m.messageId),
      ["m_abcdefghij"],
    );
    assert.ok(Date.parse(messages[0]!.at) <= Date.now() + AHEAD_MS);
    const snap = await host.snapshot("a_0123456789");
    assert.equal(snap.ready?.readyAt, new Date(EARLIEST_MS).toISOString());
    assert.ok(snap.blocked!.length <= 16 * 1024);
    answers["files.conversation"] = {
      sessionPath: "/s.jsonl",
      earlier: false,
      turns: Array.from({ length: 50 }, (_, i) => ({
        at: i % 2 ? "-271821-04-20T00:00:00.000Z" : "no time",
        lines: [{ kind: "answer", text: "w".repeat(MAX_RESULT_BYTES / 16) }],
      })),
    };
    const c = await host.conversation("a_0123456789", 3);
    assert.equal(c.turns?.length, 3, "no more turns than asked for");
    assert.equal(c.earlier, true);
    for (const t of c.turns!) {
      assert.ok(t.at === undefined || t.at === new Date(EARLIEST_MS).toISOString(), String(t.at));
      for (const l of t.lines) assert.ok(l.text.length <= 16_100);
    }
  });
});

describe("sheep data: the files of a sheep on this machine", () => {
  let agentDir: string;
  before(async () => {
    agentDir = await mkdtemp(join(tmpdir(), "pi-shepherd-data-"));
  });
  after(() => rm(agentDir, { recursive: true, force: true }));

  it("an outbox file with an 8 MiB usage string and out-of-range times reads as numbers and real instants", async () => {
    const id = "a_hostile001";
    const layout = sheepLayout(sheepDir(agentDir, id));
    await mkdir(layout.outbox, { recursive: true, mode: 0o700 });
    await writeFile(
      layout.outboxFile(P),
      JSON.stringify({
        promptId: P,
        status: "completed",
        text: "done",
        usage: { input: "<img src=x>".repeat(800_000), output: 3, cost: "1e400" },
        startedAt: new Date(-271821, 3, 20).toISOString(),
        finishedAt: "+275760-09-13T00:00:00.000Z",
      }),
    );
    const r = await testSheepFiles(agentDir).result(id, P);
    assert.deepEqual(r?.usage, { output: 3 });
    assert.equal(r?.startedAt, new Date(EARLIEST_MS).toISOString());
    assert.ok(Date.parse(r!.finishedAt!) <= Date.now() + AHEAD_MS);
  });

  it("status.json and exit.json: times read as instants, texts bounded", async () => {
    const id = "a_hostile002";
    const layout = sheepLayout(sheepDir(agentDir, id));
    await mkdir(layout.dir, { recursive: true, mode: 0o700 });
    await writeFile(layout.status, JSON.stringify({ pid: process.pid, readyAt: "x".repeat(100_000), blocked: "q".repeat(60_000), state: "idle" }));
    await writeFile(layout.exit, JSON.stringify({ code: 1, signal: null, at: "+275760-09-13T00:00:00.000Z" }));
    const snap = await testSheepFiles(agentDir).snapshot(id);
    assert.ok(Number.isFinite(Date.parse(snap.ready!.readyAt)));
    assert.ok(snap.blocked!.length <= 16 * 1024);
    assert.ok(Date.parse(snap.exited!.at) <= Date.now() + AHEAD_MS);
  });

  it("a message whose time is 3.5 MiB of text is no message; one out of range is clamped", () => {
    const lines = [
      { messageId: "m_0123456789", kind: "progress", text: "a", at: "2".repeat(3.5 * 1024 * 1024) },
      { messageId: "m_abcdefghij", kind: "progress", text: "b", at: new Date(-271821, 3, 20).toISOString() },
    ];
    const got = parseMessageLog(lines.map((l) => `${JSON.stringify(l)}\n`).join(""), NOW);
    assert.deepEqual(
      got.map((m) => [m.messageId, m.at]),
      [["m_abcdefghij", new Date(EARLIEST_MS).toISOString()]],
    );
  });
});
