import assert from "node:assert/strict";
import { appendFileSync, chmodSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AuditEvent } from "../../../src/ports/audit.ts";
import { AUDIT_MAX_BYTES, AuditLog, readAudit } from "../../../src/stores/audit-log.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const ev = (n: number, extra: Partial<AuditEvent> = {}): AuditEvent => ({
  event: "prompt",
  time: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`,
  owner: "1:t",
  agentId: "a_0000000001",
  promptId: `p_${String(n).padStart(10, "0")}`,
  bytes: n,
  ...extra,
});
const mode = (p: string) => statSync(p).mode & 0o777;

describe("audit log file", () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-audit-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("appends one JSON line per event, in order, in a private file in a private dir it creates", async () => {
    const dir = join(root, "fresh", "pi-shepherd");
    const log = new AuditLog({ dir });
    for (let i = 1; i <= 5; i++) log.record(ev(i));
    const lines = (await readFile(join(dir, "audit.ndjson"), "utf8")).trimEnd().split("\n");
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as AuditEvent).bytes),
      [1, 2, 3, 4, 5],
    );
    assert.equal(mode(join(dir, "audit.ndjson")), 0o600);
    assert.equal(mode(dir), 0o700);
  });

  it("rotates past its size into exactly one old file, both private", async () => {
    const dir = join(root, "rotate");
    const log = new AuditLog({ dir, maxBytes: 2000 });
    for (let i = 1; i <= 200; i++) log.record(ev(i));
    assert.deepEqual((await readdir(dir)).sort(), ["audit.ndjson", "audit.ndjson.1"]);
    for (const f of ["audit.ndjson", "audit.ndjson.1"]) {
      assert.equal(mode(join(dir, f)), 0o600, f);
      assert.ok(statSync(join(dir, f)).size <= 2000, `${f} stays under the limit`);
    }
    // Nothing between the two files is lost: the old one ends where the current one starts.
    const events = await readAudit(dir, { limit: 1000 });
    const seen = events.map((e) => e.bytes!);
    assert.equal(seen.at(-1), 200);
    assert.deepEqual(
      seen,
      Array.from({ length: seen.length }, (_, i) => 201 - seen.length + i),
    );
  });

  it("the real limit is 5 MB: a file at the limit rotates on the next line", async () => {
    const dir = join(root, "five");
    const log = new AuditLog({ dir });
    log.record(ev(1));
    appendFileSync(join(dir, "audit.ndjson"), `${"x".repeat(AUDIT_MAX_BYTES - statSync(join(dir, "audit.ndjson")).size - 1)}\n`);
    assert.equal(statSync(join(dir, "audit.ndjson")).size, AUDIT_MAX_BYTES);
    log.record(ev(2));
    assert.equal(statSync(join(dir, "audit.ndjson.1")).size, AUDIT_MAX_BYTES);
    assert.deepEqual(
      (await readAudit(dir, { limit: 10 })).map((e) => e.bytes),
      [1, 2],
    );
    log.record(ev(3));
    assert.deepEqual((await readdir(dir)).sort(), ["audit.ndjson", "audit.ndjson.1"], "still one old file");
  });

  it("a log someone made readable becomes private again; a link in its place is not followed; failures never throw", async () => {
    const dir = join(root, "hostile");
    const log = new AuditLog({ dir, onWarning: (m) => warnings.push(m) });
    const warnings: string[] = [];
    log.record(ev(1));
    chmodSync(join(dir, "audit.ndjson"), 0o644);
    log.record(ev(2));
    assert.equal(mode(join(dir, "audit.ndjson")), 0o600);
    await rm(join(dir, "audit.ndjson"));
    const target = join(root, "elsewhere.txt");
    writeFileSync(target, "untouched\n");
    symlinkSync(target, join(dir, "audit.ndjson"));
    log.record(ev(3));
    log.record(ev(4));
    assert.equal(await readFile(target, "utf8"), "untouched\n");
    assert.equal(warnings.length, 1, "warned once, not on every event");
  });

  it("reads back only well-formed events, the last N, of one sheep by id or label", async () => {
    const dir = join(root, "read");
    const log = new AuditLog({ dir });
    log.record(ev(1, { agentId: "a_0000000001", label: "alpha" }));
    log.record(ev(2, { agentId: "a_0000000002", label: "beta" }));
    appendFileSync(
      join(dir, "audit.ndjson"),
      'not json\n{"event":"explode","time":"t","owner":"o"}\n{"event":"prompt","time":1,"owner":"o"}\n{"event":"close","time":"t","owner":"o","label":{"x":1}}\n',
    );
    log.record(ev(3, { agentId: "a_0000000001", label: "alpha" }));
    assert.deepEqual(
      (await readAudit(dir, { limit: 10 })).map((e) => e.bytes),
      [1, 2, 3],
    );
    assert.deepEqual(
      (await readAudit(dir, { limit: 10, agent: "alpha" })).map((e) => e.bytes),
      [1, 3],
    );
    assert.deepEqual(
      (await readAudit(dir, { limit: 1, agent: "a_0000000002" })).map((e) => e.bytes),
      [2],
    );
    assert.deepEqual(await readAudit(join(root, "none"), { limit: 5 }), []);
  });
});

describe("audit events from the core", () => {
  it("start, ready, prompt, result, close, in order, each with time, owner and ids", async () => {
    const world = new MemoryWorld();
    const clock = new FakeClock();
    const events: AuditEvent[] = [];
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", clock, audit: { record: (e) => events.push(e) } });
    const a = await shepherd.start({ definition: { name: "w", description: "d", source: "user", path: "/w.md" }, cwd: "/work", label: "alpha" });
    const p = await shepherd.prompt(a.agentId, "hello");
    world.answer(a.agentId, p.promptId, "hi");
    await shepherd.wait([p.promptId]);
    await shepherd.close(a.agentId);
    await settle();
    assert.deepEqual(
      events.map((e) => [e.event, e.owner, e.agentId, e.label, e.promptId]),
      [
        ["start", "me", a.agentId, "alpha", undefined],
        ["ready", "me", a.agentId, "alpha", undefined],
        ["prompt", "me", a.agentId, "alpha", p.promptId],
        ["result", "me", a.agentId, "alpha", p.promptId],
        ["close", "me", a.agentId, "alpha", undefined],
      ],
    );
    assert.ok(events.every((e) => !Number.isNaN(Date.parse(e.time))));
    assert.equal(events[2]!.bytes, 5);
    assert.equal(events[3]!.status, "completed");
    assert.equal(events[0]!.paneId, a.paneId);
  });

  it("a sink that throws changes nothing", async () => {
    const world = new MemoryWorld();
    const shepherd = new Shepherd({
      runtime: world.runtime,
      files: world.files,
      owner: "me",
      clock: new FakeClock(),
      audit: {
        record: () => {
          throw new Error("disk on fire");
        },
      },
    });
    const a = await shepherd.start({ definition: { name: "w", description: "d", source: "user", path: "/w.md" }, cwd: "/work" });
    assert.equal((await shepherd.close(a.agentId)).alreadyClosed, false);
  });
});
