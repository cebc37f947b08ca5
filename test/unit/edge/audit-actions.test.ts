/**
 * Every action that changes the user's checkout, branch or a sheep is an audit event: land (done
 * and refused), close, prune, reply and steer, each with the sheep's id and label; a refusal the
 * core told is not told again by the tool's entry.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { logNotice } from "../../../src/command/text.ts";
import { ShepherdError } from "../../../src/domain/errors.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import type { AuditEvent } from "../../../src/ports/audit.ts";
import { AuditLog, readAudit } from "../../../src/stores/audit-log.ts";
import { DEFAULT_SETTINGS } from "../../../src/settings.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { runToolCall } from "../../../src/edge/entry.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorkspace } from "../../support/memory-workspace.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { parseMessageId } from "../../../src/domain/ids.ts";

const def: AgentDefinition = { name: "worker", description: "does work", source: "bundled", path: "/agents/worker.md" };

function setup() {
  const world = new MemoryWorld();
  const workspace = new MemoryWorkspace();
  const events: AuditEvent[] = [];
  const shepherd = new Shepherd({
    runtime: world.runtime,
    files: world.files,
    owner: "me",
    clock: new FakeClock(),
    workspace,
    audit: { record: (e) => events.push(e) },
  });
  const ctx: DispatchContext = { shepherd, settings: DEFAULT_SETTINGS, cwd: "/repo", agentDir: "/agent", bundledDir: "/bundled", trust: { hasUI: false } };
  // The tool's entry as the extension wires it: its events go to the same log as the core's.
  const call = (params: Record<string, unknown>) =>
    runToolCall(params, {
      context: async () => ctx,
      doctor: async () => {
        throw new Error("no doctor here");
      },
      audit: (e) => events.push({ ...e, time: new Date(0).toISOString(), owner: "me" }),
    });
  const start = (label: string, isolate = false) => shepherd.start({ definition: def, cwd: "/repo", label, isolate });
  /** The events of one kind, as [event, agentId, label] and the fields asked for. */
  const of = (name: AuditEvent["event"], ...fields: (keyof AuditEvent)[]) =>
    events.filter((e) => e.event === name).map((e) => [e.agentId, e.label, ...fields.map((f) => e[f])]);
  return { world, workspace, shepherd, events, call, start, of };
}

describe("audit events of the actions that change a checkout, a branch or a sheep", () => {
  it("land: a land that happened is an event with the branches, the commit and what came in", async () => {
    const t = setup();
    const a = await t.start("fixer", true);
    await t.call({ action: "land", agentId: "fixer", squash: true });
    assert.deepEqual(t.of("land", "branch", "into", "squash", "landed", "fileCount"), [[a.agentId, "fixer", a.worktree!.branch, "main", true, true, 0]]);
    assert.match(t.events.find((e) => e.event === "land")!.commit ?? "", /^[0-9a-f]{40}$/);
  });

  it("land: a refused land is one refusal naming the sheep, told by the core and not again by the entry", async () => {
    const t = setup();
    const a = await t.start("fixer", true);
    t.workspace.land = async () => {
      throw new ShepherdError("land_refused", "your checkout has uncommitted changes in a.txt. Nothing was changed.");
    };
    await assert.rejects(t.call({ action: "land", agentId: "fixer" }), /^ShepherdError: \[land_refused\]/);
    const told = t.events.filter((e) => e.event === "refusal" || e.event === "failure");
    assert.deepEqual(
      told.map((e) => [e.event, e.action, e.reason, e.agentId, e.label]),
      [["refusal", "land", "land_refused", a.agentId, "fixer"]],
    );
    assert.match(told[0]!.error!, /uncommitted changes in a\.txt/);
    // One that is not isolated fails before anything happens: still told once, with the sheep.
    const plain = await t.start("plain");
    await assert.rejects(t.call({ action: "land", agentId: "plain" }), /\[invalid_params\]/);
    assert.deepEqual(
      t.events.filter((e) => e.event === "failure").map((e) => [e.action, e.reason, e.agentId]),
      [["land", "invalid_params", plain.agentId]],
    );
  });

  it("steer and reply are events of their own, with what they reached and their size, never their text", async () => {
    const t = setup();
    const a = await t.start("scout");
    const p = await t.shepherd.prompt(a.agentId, "go");
    const s = await t.shepherd.prompt(a.agentId, "left, not right", { deliverAs: "steer" });
    assert.deepEqual(t.of("steer", "promptId", "steerId", "bytes"), [[a.agentId, "scout", p.promptId, s.steerId, 15]]);
    t.world.say(a.agentId, { messageId: "m_000000000b", kind: "question", text: "which gate?", awaitReply: true, timeoutSec: 60 });
    await t.call({ action: "reply", agentId: "scout", messageId: "m_000000000b", text: "the north one" });
    assert.deepEqual(t.of("reply", "messageId", "bytes"), [[a.agentId, "scout", "m_000000000b", 13]]);
    assert.ok(!JSON.stringify(t.events).includes("north"), "the answer's text stays out of the log");
    await assert.rejects(t.call({ action: "reply", agentId: "scout", messageId: "m_000000000b", text: "again" }), /\[reply_refused\]/);
    assert.deepEqual(
      t.events.filter((e) => e.event === "refusal").map((e) => [e.action, e.reason, e.agentId]),
      [["reply", "reply_refused", a.agentId]],
    );
  });

  it("close and prune: a close, a refused close, and prune of a gone, an exited and a closed sheep", async () => {
    const t = setup();
    const busy = await t.start("busy", true);
    t.workspace.states.set(busy.worktree!.path, { exists: true, uncommitted: ["x.txt"], unlanded: false });
    await assert.rejects(t.call({ action: "close", agentId: "busy", removeWorktree: true }), /\[dirty_worktree\]/);
    assert.deepEqual(
      t.events.filter((e) => e.event === "failure").map((e) => [e.action, e.reason, e.agentId, e.label]),
      [["close", "dirty_worktree", busy.agentId, "busy"]],
    );
    const gone = await t.start("gone");
    const dead = await t.start("dead");
    const done = await t.start("done");
    await t.call({ action: "close", agentId: "done" });
    t.world.killPane(gone.agentId);
    t.world.exitPi(dead.agentId, { code: 1, signal: null });
    await t.call({ action: "prune" });
    assert.deepEqual(t.of("close"), [[done.agentId, "done"]]);
    assert.deepEqual(
      t.of("prune").sort(),
      [
        [done.agentId, "done"],
        [gone.agentId, "gone"],
        [dead.agentId, "dead"],
      ].sort(),
    );
  });

  it("the new events are read back from the file and shown by /shepherd log", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-audit-actions-"));
    try {
      const t = setup();
      const log = new AuditLog({ dir });
      const a = await t.start("fixer", true);
      const p = await t.shepherd.prompt(a.agentId, "go");
      await t.shepherd.prompt(a.agentId, "faster", { deliverAs: "steer" });
      t.world.say(a.agentId, { messageId: "m_000000000b", kind: "question", text: "ok?", awaitReply: true, timeoutSec: 60 });
      await t.shepherd.reply(a.agentId, parseMessageId("m_000000000b", "reply"), "yes");
      t.world.answer(a.agentId, p.promptId, "done");
      await t.shepherd.wait([p.promptId]);
      await t.shepherd.land(a.agentId, { squash: false });
      for (const e of t.events) log.record(e);
      const back = await readAudit(dir, { limit: 100 });
      assert.deepEqual(
        back.map((e) => e.event),
        t.events.map((e) => e.event),
      );
      const text = logNotice(back.filter((e) => ["steer", "reply", "land"].includes(e.event)));
      assert.match(text, /steer {3}fixer \(a_\w+\) p_\w+ s_\w+, 6 bytes · by the shepherd itself$/m);
      assert.match(text, /reply {3}fixer \(a_\w+\) to m_000000000b, 3 bytes · by the shepherd itself$/m);
      assert.match(text, /land {4}fixer \(a_\w+\) shepherd\/\S+ into main as [0-9a-f]{12}, 0 files · by the shepherd itself$/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
