/**
 * A herd of 64 costs per sheep what a herd of 16 does: the work of one wait on every sheep while
 * they answer in turn, and of one view of the herd, counted (not timed) at both sizes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { herdWork } from "../../support/herd-work.ts";

describe("a herd of 64", () => {
  it("reads each sheep's message log a fixed number of times per answer, not once per answer of every sheep", async () => {
    const small = await herdWork(16);
    const big = await herdWork(64);
    // The courier reads the log of the sheep whose bell rang; the wait's end reads everyone once.
    assert.ok(big.messages / 64 <= 4, `${big.messages} message reads for 64 answers`);
    assert.equal(big.messages / 64, small.messages / 16, `per sheep: ${small.messages / 16} at 16, ${big.messages / 64} at 64`);
    for (const k of ["snapshot", "result", "progress"] as const) assert.ok(big[k] / 64 <= small[k] / 16 + 0.1, `${k}: ${small[k]} at 16, ${big[k]} at 64`);
  });

  it("walks the prompts once for a view of the herd, not once per sheep", async () => {
    const big = await herdWork(64);
    assert.equal(big.viewChecks, big.prompts, `${big.viewChecks} prompt records walked for ${big.prompts} prompts of 64 sheep`);
  });

  it("draws a frame of the herd widget at 64 with one walk of the prompts and one line a sheep", async () => {
    const big = await herdWork(64);
    assert.equal(big.widgetChecks, big.prompts, `${big.widgetChecks} prompt records walked for one widget frame of ${big.prompts} prompts`);
    assert.equal(big.widgetLines, 65, "a title and one line a sheep");
  });
});

describe("herd at 64", () => {
  it("asks the multiplexer once for the whole herd, however the clock moves while each sheep is looked at", async () => {
    const { Shepherd } = await import("../../../src/core/shepherd.ts");
    const { MemoryWorld } = await import("../../support/memory-world.ts");
    const { FakeClock } = await import("../../support/fake-clock.ts");
    // A clock a millisecond later at every reading: a herd's looks never all land in one millisecond.
    class TickingClock extends FakeClock {
      private ticks = 0;
      override now(): number {
        return super.now() + this.ticks++;
      }
    }
    const world = new MemoryWorld();
    const s = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock: new TickingClock(), livenessIntervalMs: 1000 });
    for (let i = 0; i < 64; i++)
      await s.start({ definition: { name: "echo", description: "d", source: "user", path: "/a/echo.md" }, cwd: "/", label: `s${i}` });
    const asked = () => world.calls.filter((c) => c.startsWith("liveness")).length;
    const before = asked();
    const all = await s.herd();
    assert.equal(all.length, 64);
    assert.ok(all.every((a) => a.paneAlive));
    assert.equal(asked() - before, 1, `${asked() - before} multiplexer questions for one herd of 64`);
    await s.dispose();
  });
});
