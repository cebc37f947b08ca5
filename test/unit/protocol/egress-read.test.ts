/**
 * A sandboxed sheep's egress log read back (status, read, the panel): the proxy's own lines, and
 * what a sheep can put in that file of its own directory instead (it can write there): forged
 * fields, control characters, huge numbers, lines of another shape, a link, a FIFO, a huge file.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { EgressLog } from "../../../src/sandbox/egress/log.ts";
import { MAX_EGRESS_READ, readEgressReport } from "../../../src/protocol/egress-log.ts";
import { egressAttemptOf, egressReportOf } from "../../../src/ports/egress-report.ts";

const T0 = "2026-12-06T04:00:00.000Z";
const entry = (target: string, verdict: "allowed" | "refused", extra: Record<string, unknown> = {}) => ({
  time: T0,
  target,
  method: "CONNECT",
  verdict,
  bytesUp: verdict === "allowed" ? 100 : 0,
  bytesDown: verdict === "allowed" ? 2500 : 0,
  durationMs: 3,
  ...extra,
});
const lines = (...xs: unknown[]) => xs.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("\n") + "\n";

describe("the egress log read back", () => {
  let root: string;
  let n = 0;
  const dir = async () => {
    const d = join(root, `s${++n}`);
    await mkdir(d);
    return d;
  };
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "egress-read-"));
  });
  after(() => rm(root, { recursive: true, force: true }));

  it("counts what the proxy wrote, the rotated file first, and hands back the last entries, oldest first", async () => {
    const d = await dir();
    // Written by the proxy's own log, rotation included (a tiny cap: every few lines a new file).
    const log = new EgressLog(join(d, "egress.ndjson"), { maxBytes: 600 });
    for (let i = 0; i < 4; i++) log.add(entry(`host${i}.example:443`, i % 2 ? "refused" : "allowed", { time: `2026-12-06T04:00:0${i}.000Z` }));
    await log.flushed();
    const r = (await readEgressReport(d, 2))!;
    // The cap rotated once: what the two files hold is counted (what went before them is dropped, as the proxy drops it).
    const kept = r.allowed + r.refused;
    assert.ok(kept >= 2 && kept <= 4, JSON.stringify(r));
    assert.deepEqual(
      r.entries.map((e) => [e.target, e.verdict]),
      [
        ["host2.example:443", "allowed"],
        ["host3.example:443", "refused"],
      ],
    );
    assert.equal(r.skipped, 0);
    const all = (await readEgressReport(d, 100))!;
    assert.equal(all.since, all.entries[0]!.time);
    assert.equal(all.bytesDown, all.entries.filter((e) => e.verdict === "allowed").length * 2500);
    assert.deepEqual((await readEgressReport(d, 0))!.entries, [], "none asked, none given (slice(-0) would give all)");
  });

  it("no log: undefined; a link or a FIFO in the log's place is no log, and is never followed or waited on", async () => {
    assert.equal(await readEgressReport(await dir(), 10), undefined);
    const d = await dir();
    await writeFile(join(root, "secret.txt"), lines(entry("forged.example:1", "allowed")));
    await symlink(join(root, "secret.txt"), join(d, "egress.ndjson"));
    assert.equal(await readEgressReport(d, 10), undefined);
    const f = await dir();
    execFileSync("mkfifo", [join(f, "egress.ndjson")]);
    assert.equal(await readEgressReport(f, 10), undefined);
  });

  it("a sheep's own lines: bounded, printable, numbers checked; what is no entry is counted as skipped, never shown", async () => {
    const d = await dir();
    const ESC = "\u001b";
    await writeFile(
      join(d, "egress.ndjson"),
      lines(
        entry(`evil${ESC}]0;TITLE\u0007.example:443\u202e`, "refused", { reason: `not_allowed${ESC}[2J`, method: "CONNECT\nFORGED" }),
        entry("big.example:443", "allowed", { bytesUp: 1e300, bytesDown: -5, durationMs: "7" }),
        entry("x".repeat(5000), "refused"),
        { time: T0, target: "no-verdict:1" },
        { time: "not a time", target: "a:1", verdict: "refused" },
        "not json at all",
        `{"time":"${T0}","target":"half`,
        ["an", "array"],
        `{"time":"${T0}","target":"${"y".repeat(9000)}","verdict":"refused"}`,
      ),
    );
    const r = (await readEgressReport(d, 10))!;
    assert.equal(r.entries.length, 3, JSON.stringify(r.entries));
    const [evil, big, long] = r.entries;
    assert.doesNotMatch(JSON.stringify(r), /\\u001b|\\u0007|\\u202e|\\n/);
    assert.equal(evil!.target, "evil.example:443", "the whole title sequence goes, not only its ESC");
    assert.equal(evil!.reason, "not_allowed");
    assert.equal(evil!.method, "CONNECT FORGED");
    assert.deepEqual([big!.bytesUp, big!.bytesDown, big!.durationMs], [0, 0, 0]);
    assert.equal(long!.target.length, 300);
    assert.deepEqual([r.allowed, r.refused, r.skipped], [1, 2, 6]);
  });

  it("a huge log is read from its end, at most MAX_EGRESS_READ bytes of each file", async () => {
    const d = await dir();
    const one = `${JSON.stringify(entry("filler.example:443", "refused"))}\n`;
    const many = one.repeat(Math.ceil((3 * MAX_EGRESS_READ) / one.length));
    await writeFile(join(d, "egress.ndjson"), `${many}${JSON.stringify(entry("last.example:443", "allowed"))}\n`);
    const r = (await readEgressReport(d, 1))!;
    assert.equal(r.entries[0]!.target, "last.example:443");
    assert.ok(r.refused < MAX_EGRESS_READ / one.length + 1, `${r.refused} counted: only the tail was read`);
    assert.equal(r.skipped, 0, "the line the bound cut is left out, not counted as damage");
  });

  it("a report from a host is checked again: counts that are no counts, entries that are no entries, more than asked", () => {
    const r = egressReportOf(
      {
        allowed: "12",
        refused: 3,
        bytesUp: -1,
        bytesDown: Number.POSITIVE_INFINITY,
        since: "yesterday-ish",
        entries: [entry("a.example:1", "refused"), { target: 5 }, entry(`b${"\u009b"}31m.example:2`, "allowed")],
        skipped: 1,
      },
      2,
    )!;
    assert.deepEqual([r.allowed, r.refused, r.bytesUp, r.bytesDown, r.since], [0, 3, 0, 0, undefined]);
    assert.deepEqual(
      r.entries.map((e) => e.target),
      ["b.example:2"],
    );
    assert.equal(r.skipped, 2);
    assert.equal(egressReportOf({ allowed: 1 }, 5), undefined);
    assert.equal(egressAttemptOf(entry("ok:1", "allowed", { verdict: "maybe" })), undefined);
  });
});
