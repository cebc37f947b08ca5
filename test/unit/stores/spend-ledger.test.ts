import assert from "node:assert/strict";
import { mkdtemp, rm, stat, symlink, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { MAX_DAY_ENTRIES, REST_KEY } from "../../../src/domain/budget-day.ts";
import { FileSpendLedger, MAX_LEDGER_BYTES } from "../../../src/stores/spend-ledger.ts";

const DAY = "2026-12-07";
const spend = (tokens: number, costUsd = 0) => ({ tokens, outputTokens: 0, costUsd });
const zero = spend(0);
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ledger-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("reservations that do not fit what is left of the day are refused with the numbers, and nothing is written", async () => {
  const l = new FileSpendLedger(join(dir, "budget"));
  const first = await l.reserve(DAY, [{ key: "a", reservation: { tokens: 600, costUsd: 0 } }], { dailyTokens: 1000 });
  assert.equal(first.problem, undefined);
  const second = await l.reserve(
    DAY,
    [
      { key: "b", reservation: { tokens: 300, costUsd: 0 } },
      { key: "c", reservation: { tokens: 300, costUsd: 0 } },
    ],
    { dailyTokens: 1000 },
  );
  assert.match(second.problem ?? "", /these 2 sheep reserve 600 tokens, but 400 of the day's 1000 are left \(600 spent or reserved today\)/);
  assert.deepEqual(await l.totals(DAY), { tokens: 600, costUsd: 0 });
  // The file is private, its directory too.
  assert.equal((await stat(join(dir, "budget", `${DAY}.json`))).mode & 0o777, 0o600);
  assert.equal((await stat(join(dir, "budget"))).mode & 0o777, 0o700);
});

test("an open sheep counts its reservation or its spend, the larger; closed, only its spend", async () => {
  const l = new FileSpendLedger(join(dir, "budget"));
  await l.reserve(DAY, [{ key: "a", reservation: { tokens: 500, costUsd: 0.5 } }], { dailyTokens: 10_000, dailyCostUsd: 10 });
  // report answers what was spent (the day's events count that); totals count open reservations too.
  assert.deepEqual(await l.report(DAY, "a", spend(200, 0.1), zero, true), { tokens: 200, costUsd: 0.1 });
  assert.deepEqual(await l.totals(DAY), { tokens: 500, costUsd: 0.5 });
  assert.deepEqual(await l.report(DAY, "a", spend(700, 0.2), zero, true), { tokens: 700, costUsd: 0.2 });
  assert.deepEqual(await l.totals(DAY), { tokens: 700, costUsd: 0.5 });
  // An older report arriving late never lowers the total.
  assert.deepEqual(await l.report(DAY, "a", spend(300, 0.1), zero, true), { tokens: 700, costUsd: 0.2 });
  await l.report(DAY, "a", spend(700, 0.2), zero, false);
  assert.deepEqual(await l.totals(DAY), { tokens: 700, costUsd: 0.2 });
  // A sheep first seen today counts from what earlier days counted of it.
  assert.deepEqual(await l.report(DAY, "b", spend(900), spend(850), false), { tokens: 750, costUsd: 0.2 });
});

test("two shepherds reserving at once: the lock lets exactly the ones that fit in, never both of the last place", async () => {
  const a = new FileSpendLedger(join(dir, "budget"));
  const b = new FileSpendLedger(join(dir, "budget"));
  const tries = Array.from({ length: 8 }, (_, i) =>
    (i % 2 ? a : b).reserve(DAY, [{ key: `s${i}`, reservation: { tokens: 300, costUsd: 0 } }], { dailyTokens: 1000 }),
  );
  const outcomes = await Promise.all(tries);
  assert.equal(outcomes.filter((o) => o.problem === undefined).length, 3);
  assert.deepEqual(await a.totals(DAY), { tokens: 900, costUsd: 0 });
});

test("a hostile ledger file is never counted as an empty day: symlink, oversized, not JSON, another day's", async () => {
  const l = new FileSpendLedger(join(dir, "budget"));
  await l.reserve(DAY, [], { dailyTokens: 1 });
  const file = join(dir, "budget", `${DAY}.json`);
  const cases: [string, () => Promise<void>, RegExp][] = [
    ["not JSON", () => writeFile(file, "{nope"), /not JSON/],
    ["too large", () => writeFile(file, " ".repeat(MAX_LEDGER_BYTES + 1)), /over \d+ bytes/],
    ["another day", () => writeFile(file, JSON.stringify({ day: "2026-12-06", sheep: {} })), /not a ledger of that day/],
    [
      "symlink",
      async () => {
        await writeFile(join(dir, "elsewhere.json"), JSON.stringify({ day: DAY, sheep: {} }));
        await symlink(join(dir, "elsewhere.json"), file);
      },
      /not a regular file/,
    ],
  ];
  for (const [name, make, why] of cases) {
    await rm(file, { force: true });
    await make();
    await assert.rejects(l.reserve(DAY, [{ key: "x", reservation: { tokens: 1, costUsd: 0 } }], { dailyTokens: 1000 }), (e: Error) => {
      assert.match(e.message, /^\[budget_exceeded\] the day's spend ledger .* cannot be read/, name);
      assert.match(e.message, why, name);
      return true;
    });
  }
});

test("bad entries are dropped, hostile counts are not summed, and the day stays bounded without losing spend", async () => {
  const l = new FileSpendLedger(join(dir, "budget"));
  await l.reserve(DAY, [], {});
  const file = join(dir, "budget", `${DAY}.json`);
  const sheep: Record<string, unknown> = {
    good: { from: zero, to: spend(10), open: false, at: "2026-12-07T01:00:00.000Z" },
    "../evil": { from: zero, to: spend(1e9), open: false, at: "2026-12-07T01:00:00.000Z" },
    nan: { from: zero, to: { tokens: "1e9" }, open: false, at: "2026-12-07T01:00:00.000Z" },
    noTime: { from: zero, to: spend(5), open: false },
  };
  await writeFile(file, JSON.stringify({ day: DAY, sheep }));
  assert.deepEqual(await l.totals(DAY), { tokens: 10, costUsd: 0 });
  // Past the bound of entries, the oldest closed ones are summed into one.
  const many: Record<string, unknown> = {};
  for (let i = 0; i < MAX_DAY_ENTRIES; i++)
    many[`k${i}`] = { from: zero, to: spend(1), open: false, at: new Date(Date.UTC(2026, 11, 7, 0, 0, i)).toISOString() };
  await writeFile(file, JSON.stringify({ day: DAY, sheep: many }));
  await l.report(DAY, "new", spend(5), zero, true);
  const after = JSON.parse(await readFile(file, "utf8"));
  assert.ok(Object.keys(after.sheep).length <= MAX_DAY_ENTRIES);
  assert.ok(after.sheep[REST_KEY]);
  assert.deepEqual(await l.totals(DAY), { tokens: MAX_DAY_ENTRIES + 5, costUsd: 0 });
});
