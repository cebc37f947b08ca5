/**
 * Every action that takes a sheep takes its id or its live label, the same way: through the
 * tool's dispatch, as the model and /shepherd both call it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { DEFAULT_SETTINGS } from "../../../src/settings.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { dispatch } from "../../../src/edge/dispatch.ts";
import { MemoryStore } from "../../support/memory-store.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const def: AgentDefinition = { name: "echo", description: "d", source: "user", path: "/a/echo.md" };

function setup() {
  const world = new MemoryWorld();
  const store = new MemoryStore();
  const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "me", store, ownerAlive: (o) => o === "me" });
  const ctx: DispatchContext = { shepherd, settings: DEFAULT_SETTINGS, cwd: "/", agentDir: "/agent", bundledDir: "/bundled", trust: { hasUI: false } };
  return { world, store, shepherd, call: (params: Record<string, unknown>) => dispatch(params, ctx) };
}

/** The actions that take a sheep, each called with `who` in its sheep field. */
const ACTIONS: [string, (who: string) => Record<string, unknown>][] = [
  ["prompt", (who) => ({ action: "prompt", agentId: who, message: "hi" })],
  ["status", (who) => ({ action: "status", agentId: who })],
  ["read (session)", (who) => ({ action: "read", target: who })],
  ["read (screen)", (who) => ({ action: "read", target: who, source: "screen" })],
  ["read (egress)", (who) => ({ action: "read", target: who, source: "egress" })],
  ["close", (who) => ({ action: "close", agentId: who })],
];

describe("a sheep named by id or label, in every action that takes one", () => {
  it("takes a live label wherever it takes an id", async () => {
    for (const [name, params] of ACTIONS) {
      const { shepherd, call } = setup();
      const a = await shepherd.start({ definition: def, cwd: "/", label: "recon" });
      const r = await call(params("recon"));
      const agentId = (r.details.prompt ?? r.details.status ?? r.details.closed ?? r.details) as { agentId: string };
      assert.equal(agentId.agentId, a.agentId, name);
    }
  });

  it("refuses a label two live sheep share (after adopting another shepherd's herd), listing both ids", async () => {
    const { world, store, shepherd, call } = setup();
    const gone = new Shepherd({ runtime: world.runtime, files: world.files, owner: "gone", store, ownerAlive: () => false });
    const theirs = await gone.start({ definition: def, cwd: "/", label: "twin" });
    gone.dispose();
    const mine = await shepherd.start({ definition: def, cwd: "/", label: "twin" });
    assert.deepEqual((await shepherd.attach()).adopted, [theirs.agentId]);
    for (const [name, params] of ACTIONS) {
      await assert.rejects(
        call(params("twin")),
        (e: Error) =>
          e.message.startsWith('[ambiguous_label] label "twin" names 2 live sheep: ') &&
          e.message.includes(mine.agentId) &&
          e.message.includes(theirs.agentId) &&
          e.message.endsWith("pass one of these ids instead."),
        name,
      );
    }
    const byId = await call({ action: "status", agentId: theirs.agentId });
    assert.equal((byId.details.status as { agentId: string }).agentId, theirs.agentId, "each still answers by its id");
  });

  it("says an unknown label is unknown, and a closed sheep's label no longer names it", async () => {
    const { shepherd, call } = setup();
    const a = await shepherd.start({ definition: def, cwd: "/", label: "old" });
    await call({ action: "close", agentId: "old" });
    for (const [name, params] of ACTIONS) {
      for (const who of ["nobody", "old"]) {
        // A second close by label says what a second close by id says (issue 21, item 16).
        if (name === "close" && who === "old") continue;
        await assert.rejects(call(params(who)), new RegExp(`^ShepherdError: \\[unknown_agent\\] no live sheep with id or label "${who}"`), `${name} ${who}`);
      }
    }
    const again = (await call({ action: "close", agentId: "old" })).content[0]!.text;
    assert.equal(again, (await call({ action: "close", agentId: a.agentId })).content[0]!.text, "by label as by id");
    assert.match(again, /already closed/);
    assert.match((await call({ action: "status", agentId: a.agentId })).content[0]!.text, /: closed\.$/);
    // Its session file is kept, so its conversation still reads by id; its screen is gone with its pane.
    assert.match((await call({ action: "read", target: a.agentId })).content[0]!.text, /^old \(a_\w{10}, echo\) has no conversation yet: /);
    await assert.rejects(call({ action: "read", target: a.agentId, source: "screen" }), /^ShepherdError: \[agent_closed\]/);
  });
});
