/**
 * The tallies of state.json read back (src/stores/state-tallies.ts): a tally is summed into the
 * totals a person sees, so a hostile or corrupt one (text, negative, past its bound, a day that
 * holds more than the whole, too many days, an owner twice, too many tallies, not a list) is left
 * out whole, with a warning, and the file still loads; a good one comes back as it was written,
 * and a later write carries only the good ones.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { MAX_TALLIES_KEPT, MAX_TALLY_COST } from "../../../src/domain/bounds.ts";
import { FileStateStore } from "../../../src/stores/state-store.ts";
import { checkTallies } from "../../../src/stores/state-tallies.ts";

const good = (owner: string, input = 10) => ({
  owner,
  input,
  output: 2,
  cost: 0.5,
  prompts: 1,
  days: [{ day: "2026-12-07", input, output: 2, cost: 0.5, prompts: 1 }],
});

describe("state.json's tallies read back", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-tallies-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a tally not exactly of its shape is left out whole; one owner counts once", () => {
    const bad = [
      { ...good("text"), input: "10" },
      { ...good("negative"), output: -1 },
      { ...good("huge"), cost: MAX_TALLY_COST * 2 },
      { ...good("fraction"), prompts: 1.5 },
      { ...good("inflated"), days: [{ day: "2026-12-07", input: 11, output: 2, cost: 0.5, prompts: 1 }] },
      { ...good("no-day"), days: [{ day: "yesterday", input: 1, output: 0, cost: 0, prompts: 0 }] },
      { ...good("days"), days: ["2026-12-05", "2026-12-06", "2026-12-07"].map((day) => ({ day, input: 1, output: 0, cost: 0, prompts: 0 })) },
      { ...good("twice-a-day"), days: [good("x").days[0], good("x").days[0]] },
      { ...good("\u001b[31m") },
      { ...good("") },
      null,
      "tally",
      good("ok"),
      good("ok", 99),
    ];
    const { tallies, rejected } = checkTallies(bad);
    assert.deepEqual(tallies, [good("ok")]);
    assert.equal(rejected, bad.length - 1);
    assert.deepEqual(checkTallies({ owner: "x" }), { tallies: [], rejected: 1 }, "not a list");
    assert.deepEqual(checkTallies(undefined), { tallies: [], rejected: 0 }, "a file from before tallies");
    const many = checkTallies(Array.from({ length: MAX_TALLIES_KEPT + 10 }, (_, i) => good(`o${i}`)));
    assert.equal(many.tallies.length, MAX_TALLIES_KEPT);
    assert.equal(many.tallies[0]!.owner, "o10", "the newest are kept");
  });

  it("the file still loads with its records; the bad tallies are told and gone after the next write", async () => {
    const d = join(dir, "file");
    const store = new FileStateStore(d);
    await store.load();
    await writeFile(
      join(d, "state.json"),
      JSON.stringify({ version: 1, agents: [], prompts: [], tallies: [good("ok"), { ...good("bad"), input: 1e300 }, good("ok", 5)] }),
    );
    const { state, warnings } = await store.load();
    assert.deepEqual(state.tallies, [good("ok")]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /left out 2 spend tallies .* the totals do not count them/);
    await new FileStateStore(d).save("me", { agents: [], prompts: [], tallies: [good("me", 3)] });
    const file = JSON.parse(await readFile(join(d, "state.json"), "utf8")) as { tallies: unknown[] };
    assert.deepEqual(file.tallies, [good("ok"), good("me", 3)]);
  });

  it("a save without a tally keeps the one stored under its name; a tally taken over is dropped", async () => {
    const d = join(dir, "merge");
    const store = new FileStateStore(d);
    await store.save("me", { agents: [], prompts: [], tallies: [good("me")] });
    await store.save("dead", { agents: [], prompts: [], tallies: [good("dead")] });
    await store.save("me", { agents: [], prompts: [] });
    assert.deepEqual((await store.load()).state.tallies, [good("me"), good("dead")]);
    // Another owner's name in a save's tallies is not written: a shepherd writes its own tally only.
    await store.save("me", { agents: [], prompts: [], tallies: [good("me", 4), good("dead", 1000)], forgottenTallies: ["dead"] });
    assert.deepEqual((await store.load()).state.tallies, [good("me", 4)]);
  });
});
