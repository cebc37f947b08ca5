/**
 * Files a sheep can write are read only as regular files and only up to their bound, on real files
 * in a temp directory: a FIFO in their place blocks nothing (a writer stands ready at its other end,
 * so a reader that opened it would get an answer and the test would see it), a symlink is not
 * followed, an oversized file is read only up to its bound (bytes counted by the kernel, in
 * /proc/self/io), and a read that fails after a good one keeps what was read.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { READ_LIMITS, readBounded, readBoundedSync } from "../../../src/protocol/bounded-read.ts";
import { testSheepFiles } from "../../support/local-sheep-files.ts";
import { readSessionTail } from "../../../src/protocol/session-log.ts";
import { sheepDir, sheepLayout } from "../../../src/protocol/layout.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

let agentDir: string;
before(async () => {
  agentDir = await mkdtemp(join(tmpdir(), "pi-shepherd-bounded-"));
});
after(async () => {
  await rm(agentDir, { recursive: true, force: true });
});

const host = () => testSheepFiles(agentDir);

async function sheep(agentId: string) {
  const layout = sheepLayout(sheepDir(agentDir, agentId));
  await mkdir(layout.outbox, { recursive: true, mode: 0o700 });
  await mkdir(layout.replies, { recursive: true, mode: 0o700 });
  return layout;
}

const now = new Date().toISOString();
const statusText = JSON.stringify({ pid: process.pid, readyAt: now, state: "idle", updatedAt: now });
const resultText = (promptId: string) => JSON.stringify({ promptId, status: "completed", text: "the answer" });
const messageLine = (id: string, kind = "question") => `${JSON.stringify({ messageId: id, kind, text: `text of ${id}`, at: now })}\n`;

/**
 * A FIFO at `path` with a writer ready at the other end: whoever opens it for reading gets `content`.
 * The writer blocks until then; the test ends it by its handle.
 */
const writerAt = (path: string, content: string) => execa("sh", ["-c", 'printf %s "$1" > "$2"', "sh", content, path], { reject: false });
type Writer = { writer: ReturnType<typeof writerAt> };

async function fifoWithWriter(path: string, content: string): Promise<Writer> {
  await execa("mkfifo", ["-m", "600", path]);
  // Wrapped: a promise of the subprocess itself would wait for it to end.
  return { writer: writerAt(path, content) };
}

async function ended({ writer }: Writer): Promise<void> {
  writer.kill("SIGKILL");
  await writer;
}

/** Bytes this process has read through read(2) and friends so far (Linux). */
function bytesRead(): number {
  const m = /^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  assert.ok(m, "/proc/self/io has rchar");
  return Number(m[1]);
}

describe("bounded reads: a FIFO in a sheep's file blocks nothing", () => {
  it("status.json as a FIFO is no status (it is never opened)", async () => {
    const layout = await sheep("a_fifostat01");
    const writer = await fifoWithWriter(layout.status, statusText);
    try {
      const snap = await host().snapshot("a_fifostat01");
      assert.equal(snap.ready, undefined, "a status read from the FIFO would say ready");
    } finally {
      await ended(writer);
    }
  });

  it("an outbox file as a FIFO settles nothing as completed: the result is refused, saying why", async () => {
    const layout = await sheep("a_fifoout001");
    const writer = await fifoWithWriter(layout.outboxFile("p_fifo000001"), resultText("p_fifo000001"));
    try {
      const r = await host().result("a_fifoout001", "p_fifo000001");
      assert.equal(r?.status, "failed");
      assert.equal(r?.refused?.code, "result_unreadable");
      assert.match(r?.refused?.reason ?? "", /is not a regular file/);
    } finally {
      await ended(writer);
    }
  });

  it("messages.jsonl as a FIFO is refused with [messages_unreadable], not read", async () => {
    const layout = await sheep("a_fifomsg001");
    const writer = await fifoWithWriter(layout.messages, messageLine("m_fifo000001"));
    try {
      await assert.rejects(
        host().messages("a_fifomsg001"),
        /^ShepherdError: \[messages_unreadable\] sheep a_fifomsg001: messages\.jsonl is not a regular file/,
      );
    } finally {
      await ended(writer);
    }
  });

  it("the reader itself: a FIFO is not_regular, sync and async", async () => {
    const dir = await mkdtemp(join(agentDir, "fifo-"));
    const path = join(dir, "f");
    const writer = await fifoWithWriter(path, "data");
    try {
      assert.deepEqual(readBoundedSync(path, { max: 10 }), { ok: false, why: "not_regular", max: 10 });
      assert.deepEqual(await readBounded(path, { max: 10 }), { ok: false, why: "not_regular", max: 10 });
      assert.deepEqual(await readBounded(join(dir, "none"), { max: 10 }), { ok: false, why: "missing", max: 10 });
      assert.deepEqual(readBoundedSync(dir, { max: 10 }), { ok: false, why: "not_regular", max: 10 }, "a directory");
      assert.deepEqual(readBoundedSync("/dev/null", { max: 10 }), { ok: false, why: "not_regular", max: 10 }, "a device");
    } finally {
      await ended(writer);
    }
  });
});

describe("bounded reads: symlinks are not followed", () => {
  it("status.json, an outbox file and the message log as symlinks to good files are not used", async () => {
    const layout = await sheep("a_symlink001");
    const elsewhere = await mkdtemp(join(agentDir, "elsewhere-"));
    const target = async (name: string, text: string) => {
      const p = join(elsewhere, name);
      await writeFile(p, text);
      return p;
    };
    await symlink(await target("status.json", statusText), layout.status);
    await symlink(await target("result.json", resultText("p_symlink001")), layout.outboxFile("p_symlink001"));
    await symlink(await target("messages.jsonl", messageLine("m_symlink001")), layout.messages);
    const h = host();
    assert.equal((await h.snapshot("a_symlink001")).ready, undefined);
    const r = await h.result("a_symlink001", "p_symlink001");
    assert.deepEqual([r?.status, r?.refused?.code], ["failed", "result_unreadable"]);
    await assert.rejects(h.messages("a_symlink001"), /\[messages_unreadable\]/);
  });

  it("a session file that is a symlink is no session", async () => {
    const dir = await mkdtemp(join(agentDir, "session-"));
    const real = join(dir, "real.jsonl");
    const line = JSON.stringify({ type: "message", id: "u", parentId: null, message: { role: "user", content: "hello" } });
    await writeFile(real, `${line}\n`);
    await symlink(real, join(dir, "session.jsonl"));
    assert.ok(await readSessionTail(real, 1), "the file itself reads");
    assert.equal(await readSessionTail(join(dir, "session.jsonl"), 1), undefined);
  });
});

describe("bounded reads: an oversized file is read only up to its bound", () => {
  const big = 64 * 1024 * 1024;

  it("an outbox file past its bound is refused as [result_too_large] without reading it", async () => {
    const layout = await sheep("a_bigout0001");
    const path = layout.outboxFile("p_bigout0001");
    await writeFile(path, resultText("p_bigout0001"));
    await truncate(path, big); // sparse: on disk it costs nothing
    const before = bytesRead();
    const r = await host().result("a_bigout0001", "p_bigout0001");
    const read = bytesRead() - before;
    assert.deepEqual([r?.status, r?.refused?.code], ["failed", "result_too_large"]);
    assert.match(r?.refused?.reason ?? "", new RegExp(`is ${big} bytes, larger than the ${READ_LIMITS.result} bytes read of it`));
    assert.ok(read < 1024 * 1024, `read ${read} bytes of a ${big}-byte file`);
  });

  it("a message log past its bound is read only up to it (its first messages still count)", async () => {
    const layout = await sheep("a_biglog0001");
    await writeFile(layout.messages, messageLine("m_biglog0001") + messageLine("m_biglog0002"));
    await truncate(layout.messages, big);
    const before = bytesRead();
    const messages = await host().messages("a_biglog0001");
    const read = bytesRead() - before;
    assert.deepEqual(
      messages.map((m) => m.messageId),
      ["m_biglog0001", "m_biglog0002"],
    );
    assert.ok(read <= READ_LIMITS.messages + 64 * 1024, `read ${read} bytes; the bound is ${READ_LIMITS.messages}`);
  });

  it("a status.json past its bound is no status, and is not read", async () => {
    const layout = await sheep("a_bigstat001");
    const padded = JSON.stringify({ ...JSON.parse(statusText), pad: "x".repeat(READ_LIMITS.status) });
    await writeFile(layout.status, padded);
    const before = bytesRead();
    assert.equal((await host().snapshot("a_bigstat001")).ready, undefined);
    assert.ok(bytesRead() - before < 64 * 1024, "refused by its size, before reading");
  });

  it("the reader: a file past the bound gives its first bytes (head) or is refused, saying its size", async () => {
    const dir = await mkdtemp(join(agentDir, "grow-"));
    const path = join(dir, "f");
    await writeFile(path, "a".repeat(100));
    const r = readBoundedSync(path, { max: 50, over: "head" });
    assert.ok(r.ok && r.truncated && r.data.length === 50);
    assert.deepEqual(readBoundedSync(path, { max: 50 }), { ok: false, why: "too_large", size: 100, max: 50 });
    const whole = await readBounded(path, { max: 100 });
    assert.ok(whole.ok && !whole.truncated && whole.data.toString() === "a".repeat(100));
  });
});

describe("bounded reads: a failed read changes no count", () => {
  it("a message log that cannot be read after a good read answers with what was read", async () => {
    const layout = await sheep("a_logfail001");
    await writeFile(layout.messages, messageLine("m_logfail001") + messageLine("m_logfail002"));
    const h = host();
    assert.equal((await h.messages("a_logfail001")).length, 2);
    // Replaced by a directory, then by a symlink, then removed: every read keeps both messages.
    await rm(layout.messages);
    await mkdir(layout.messages);
    assert.equal((await h.messages("a_logfail001")).length, 2, "a directory in its place");
    await rm(layout.messages, { recursive: true });
    await symlink("/etc/passwd", layout.messages);
    assert.equal((await h.messages("a_logfail001")).length, 2, "a symlink in its place");
    await rm(layout.messages);
    assert.equal((await h.messages("a_logfail001")).length, 2, "gone");
    await writeFile(layout.messages, messageLine("m_logfail001"));
    assert.equal((await h.messages("a_logfail001")).length, 2, "rewritten shorter");
    await writeFile(layout.messages, messageLine("m_logfail001") + messageLine("m_logfail002") + messageLine("m_logfail003"));
    assert.equal((await h.messages("a_logfail001")).length, 3, "and a log that grew is read again");
  });
});

describe("bounded reads: a result the host would not read settles the prompt", () => {
  it("failed, with the host's [result_too_large] and its reason, not the sheep's words and not never", async () => {
    const world = new MemoryWorld();
    const s = new Shepherd({
      runtime: world.runtime,
      files: world.files,
      owner: "one",
      clock: new FakeClock(),
      store: new MemoryStore(),
      ownerAlive: () => true,
    });
    const a = await s.start({ definition: { name: "w", description: "w", source: "bundled", path: "/w.md" }, cwd: "/w" });
    const p = await s.prompt(a.agentId, "answer at length");
    const reason = `the sheep's result file outbox/${p.promptId}.json is ${64 * 1024 * 1024} bytes, larger than the ${READ_LIMITS.result} bytes read of it`;
    world.mem(a.agentId).outbox.set(p.promptId, { promptId: p.promptId, status: "failed", text: "", refused: { code: "result_too_large", reason } });
    world.ring(a.agentId);
    const [item] = await s.wait([p.promptId], { timeoutSec: 0 });
    assert.equal(item?.status, "failed");
    assert.equal(item?.error, `[result_too_large] ${reason}`);
    await s.dispose();
  });
});
