/**
 * A sandboxed sheep in a herdr pane (the fake herdr, its panes real tmux panes): it starts and
 * answers, finds no HERDR_* variable, and cannot reach herdr's socket. Its model is reached through
 * the egress proxy, as every sandboxed sheep's. What it cannot tell herdr itself, its state, the
 * shepherd tells on its behalf, as an unsandboxed sheep's own reports do (faults.test.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { type Scene, untilLogged } from "../support/scene.ts";
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

  it("herdr shows its state, told by the shepherd: idle once started, working during a prompt, idle after; once each, one source", async () => {
    const fake = world!.herdr!.fake;
    const r = await scene.ok({ action: "start", agent: "echo", label: "shown", sandbox: true });
    const { agentId, paneId } = r.details.agent as { agentId: string; paneId: string };
    const shown = async () => {
      const got = await fake.herdr(["agent", "get", paneId]);
      return got.exitCode === 0 ? (JSON.parse(got.stdout) as { result: { agent: { agent_status: string } } }).result.agent.agent_status : undefined;
    };
    const until = async (want: string) => {
      for (let i = 0; i < 600 && (await shown()) !== want; i++) await new Promise((done) => setTimeout(done, 50));
      assert.equal(await shown(), want);
    };
    await until("idle");
    const promptId = await scene.prompt(agentId, directive({ reply: "shown", delayMs: 3000, tag: "herdr-shown" }));
    await untilLogged(world!.model, "herdr-shown");
    await until("working");
    assert.equal((await scene.wait(promptId, 120)).status, "completed");
    await until("idle");
    const reports = (await fake.calls()).filter((c) => c.argv[1] === "report-agent" && c.argv[2] === paneId).map((c) => c.argv);
    assert.deepEqual(
      reports.map((a) => a.slice(3, 9).join(" ")),
      ["idle", "working", "idle"].map((s) => `--source pi-shepherd --agent pi --state ${s}`),
      JSON.stringify(reports),
    );
    await scene.ok({ action: "close", agentId });
  });
});
