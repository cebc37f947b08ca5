/**
 * `status` and `read` of a sandboxed sheep (issue 33): status counts its egress attempts, read
 * shows the last entries of its log; both through the tool's dispatch, on the in-memory world with
 * the sheep-files port's egress read stubbed (the file reading has its own tests in protocol/).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition, EgressReport } from "../../../src/ports/types.ts";
import { DEFAULT_SETTINGS } from "../../../src/settings.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { dispatch } from "../../../src/edge/dispatch.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };
const refused = { time: "2026-12-06T04:00:01.000Z", target: "127.0.0.1:9", method: "CONNECT", verdict: "refused" as const, reason: "not_allowed" };
const report: EgressReport = {
  allowed: 2,
  refused: 3,
  bytesUp: 1500,
  bytesDown: 42_000,
  since: "2026-12-06T04:00:00.000Z",
  skipped: 0,
  entries: [{ ...refused, bytesUp: 0, bytesDown: 0, durationMs: 0 }],
};

async function setup(egress: (agentId: string, entries: number) => Promise<EgressReport | undefined>) {
  const world = new MemoryWorld();
  world.files.egress = egress;
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me" });
  const ctx: DispatchContext = { shepherd, settings: DEFAULT_SETTINGS, cwd: "/", agentDir: "/agent", bundledDir: "/bundled", trust: { hasUI: false } };
  const boxed = await shepherd.start({ definition: def, cwd: "/", label: "boxed" });
  const plain = await shepherd.start({ definition: def, cwd: "/", label: "plain" });
  // The memory world runs no bubblewrap: the record says sandboxed as a sandboxed start records it.
  shepherd.registry.agents.get(boxed.agentId)!.sandboxed = true;
  const call = async (p: Record<string, unknown>) => {
    const r = await dispatch(p, ctx);
    return { text: r.content.map((c) => c.text).join("\n"), details: r.details };
  };
  return { call, boxed, plain };
}

describe("status and read of a sandboxed sheep's egress", () => {
  it("status counts its attempts; a sheep that is not sandboxed reads no log", async () => {
    const asked: string[] = [];
    const { call, boxed, plain } = await setup(async (id) => {
      asked.push(id);
      return report;
    });
    const s = await call({ action: "status", agentId: "boxed" });
    assert.match(s.text, /· sandboxed \(egress: 2 allowed, 3 refused, 1\.5 kB up, 42 kB down\)/);
    assert.deepEqual((s.details.status as { egress?: unknown }).egress, { allowed: 2, refused: 3, bytesUp: 1500, bytesDown: 42_000, since: report.since });
    const p = await call({ action: "status", agentId: "plain" });
    assert.doesNotMatch(p.text, /sandboxed|egress/);
    assert.deepEqual(asked, [boxed.agentId], `only the sandboxed sheep's log is read, not ${plain.agentId}'s`);
  });

  it("status of a sandboxed sheep with no log yet says 0 tried; one whose log cannot be read now still answers", async () => {
    const none = await setup(async () => undefined);
    assert.match((await none.call({ action: "status", agentId: "boxed" })).text, /sandboxed \(egress: 0 allowed, 0 refused, 0 B up, 0 B down\)/);
    const broken = await setup(async () => {
      throw new Error("host gone");
    });
    const s = await broken.call({ action: "status", agentId: "boxed" });
    assert.match(s.text, /· sandboxed ·/);
  });

  it("read with source egress shows the counts and the last entries, as many as lines asks (50 unless told)", async () => {
    const asked: number[] = [];
    const { call } = await setup(async (_id, n) => {
      asked.push(n);
      return report;
    });
    const r = await call({ action: "read", target: "boxed", source: "egress" });
    assert.match(r.text, /^Egress of boxed \(a_[0-9a-z]{10}, echo\) since 2026-12-06T04:00:00\.000Z: 2 allowed, 3 refused/);
    assert.match(r.text, /\nThe last 1 of 5, oldest first:\n2026-12-06T04:00:01\.000Z refused CONNECT 127\.0\.0\.1:9 \(not_allowed\)$/);
    assert.deepEqual([r.details.source, (r.details.egress as EgressReport).refused, r.details.sandboxed], ["egress", 3, true]);
    await call({ action: "read", target: "boxed", source: "egress", lines: 7 });
    assert.deepEqual(asked, [50, 7]);
    await assert.rejects(
      call({ action: "read", target: "boxed", source: "egress", turns: 2 }),
      /\[invalid_params\] "turns" counts turns of the session file; the egress log is read by "lines"/,
    );
    await assert.rejects(
      call({ action: "read", target: "boxed", source: "egress", lines: 1001 }),
      /\[invalid_params\] "lines" must be a number from 1 to 1000/,
    );
    const plain = await call({ action: "read", target: "plain", source: "egress" });
    assert.match(plain.text, /is not sandboxed/);
  });
});
