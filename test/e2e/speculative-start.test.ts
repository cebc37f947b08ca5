/**
 * Speculative start (issue 36) with a real pi shepherd over RPC, real pi sheep in a private tmux
 * server and the scripted model streaming the `shepherd` call's arguments as a real model writes
 * them: the delegation's sheep boots while the call is still being written and the call takes it;
 * with `speculativeStart: false` the same call boots its own once it runs.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { directive } from "../support/scripted-model.ts";

type AuditLine = { event: string; time: string; agentId?: string; warm?: true };

async function audit(agentDir: string): Promise<AuditLine[]> {
  const text = await readFile(join(agentDir, "pi-shepherd", "audit.ndjson"), "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditLine);
}

/** A delegation whose arguments take about two seconds to stream at 20 tokens a second. */
const call = (tag: string) => ({
  action: "delegate",
  agent: "echo",
  // What a model writes after naming the agent: a task of a few sentences.
  task: directive({ reply: `done ${tag} ${"and more words ".repeat(10)}`, tag }),
});

describe("speculative start with real pi", { timeout: 600_000 }, () => {
  const worlds: E2eWorld[] = [];
  after(async () => {
    for (const w of worlds.reverse()) await w.cleanup();
  });

  for (const on of [true, false]) {
    it(on ? "boots the sheep while the call streams; the call takes it" : "with speculativeStart false, the call boots its own when it runs", async () => {
      const world = await e2eWorld(`spec-${on}`, { agent: { agents: { "echo.md": ECHO_AGENT }, shepherdSettings: { speculativeStart: on } }, work: true });
      worlds.push(world);
      const scene = world.scene();
      // The shepherd's heavy half is composed by its first call: the speculation rides on it.
      await scene.ok({ action: "herd" });
      const shepherd = scene.shepherd;
      const r = await shepherd.call(call(on ? "on" : "off"), 180_000, { argsTokensPerSec: 20 });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, new RegExp(`done ${on ? "on" : "off"}`));
      const began = shepherd.events.find((e) => e.type === "tool_execution_start" && (e.args as { action?: string })?.action === "delegate");
      assert.ok(began, "the delegate call ran");
      const lines = await audit(world.agentDir);
      const taken = lines.find((l) => l.event === "take");
      const warmStarts = lines.filter((l) => l.event === "start" && l.warm);
      if (on) {
        assert.ok(taken, `the delegation took a sheep booted ahead: ${JSON.stringify(lines.map((l) => l.event))}`);
        const boot = warmStarts.find((l) => l.agentId === taken.agentId);
        assert.ok(boot, "the sheep it took was booted by the pool");
        // Booted while the model still wrote the call: before the call ran at all.
        const callSeen = shepherd.events.indexOf(began);
        assert.ok(callSeen >= 0);
        const streamEnd = world.model.log.filter((l) => l.kind === "tool").at(-1)?.lastByteAt ?? 0;
        assert.ok(
          Date.parse(boot.time) < streamEnd,
          `the boot (${boot.time}) began before the model finished writing the call (${new Date(streamEnd).toISOString()})`,
        );
      } else {
        assert.equal(taken, undefined, "nothing was booted ahead to take");
        assert.equal(warmStarts.length, 0, "the pool booted nothing");
      }
    });
  }
});
