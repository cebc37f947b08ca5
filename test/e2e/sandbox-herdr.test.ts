/**
 * A sandboxed sheep in a herdr pane (the fake herdr, its panes real tmux panes): it starts and
 * answers, finds no HERDR_* variable, and cannot reach herdr's socket. Its model is reached through
 * the egress proxy, as every sandboxed sheep's.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

describe("a sandboxed sheep on herdr", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let scene: Scene;

  before(async () => {
    world = await e2eWorld("sandbox-herdr", { herdr: true });
    scene = world.scene({ env: { ...world.env } });
  });

  after(async () => {
    await world?.cleanup();
  });

  it("starts, answers, and finds neither herdr's variables nor its socket", async () => {
    const socket = world!.env.HERDR_SOCKET_PATH;
    assert.ok(socket, "the shepherd runs inside the fake herdr");
    const r = await scene.ok({ action: "start", agent: "echo", label: "boxed", sandbox: true });
    const agent = r.details.agent as { agentId: string; runtime: string; sandboxed?: true };
    assert.deepEqual([agent.runtime, agent.sandboxed], ["herdr", true]);
    const command = [
      `if env | grep -E '^(HERDR_[A-Z_]*|TMUX|TMUX_PANE)='; then echo vars=ESCAPED; else echo vars=refused; fi`,
      `if test -e '${socket}'; then echo socket=ESCAPED; else echo socket=refused; fi`,
    ].join("\n");
    const promptId = await scene.prompt(agent.agentId, directive({ rounds: [[{ name: "bash", arguments: { command } }]], tag: "herdr-box" }));
    const item = await scene.wait(promptId, 120);
    assert.equal(item.status, "completed", item.error);
    const tools = world!.model.log.filter((l) => l.tag === "herdr-box").at(-1)?.toolTexts ?? [];
    assert.match(tools.at(-1) ?? "", /^vars=refused\nsocket=refused/m, tools.at(-1));
    await scene.ok({ action: "close", agentId: agent.agentId });
  });
});
