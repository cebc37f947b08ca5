/**
 * Nothing lost across /reload or a crashed shepherd: records are written through to state.json
 * and the sheep's results are files, so a new shepherd instance re-attaches and still gets answers.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { type RpcShepherd, repoRoot } from "../support/rpc-shepherd.ts";
import { directive } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

describe("persistence across /reload and a restarted shepherd", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let t: PrivateTmux;
  let agentDir: string;
  const shepherds: RpcShepherd[] = [];

  const launch = () => {
    const s = world!.shepherd({ extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
    shepherds.push(s);
    return s;
  };
  const ok = async (s: RpcShepherd, args: unknown) => (await s.ok(args)).details;
  const notified = (s: RpcShepherd, re: RegExp) =>
    s.next((e) => e.type === "extension_ui_request" && e.method === "notify" && re.test(String(e.message)), 60_000);
  const panes = async () => (await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n");

  before(async () => {
    world = await e2eWorld("reload", { work: true });
    ({ tmux: t, agentDir } = world);
  });

  after(async () => {
    await world?.cleanup();
  });

  it("a prompt sent before /reload is waited for after it, on the same ids", async () => {
    const s = launch();
    const agent = (await ok(s, { action: "start", agent: "echo", label: "survivor" })).agent as { agentId: string };
    const { promptId } = (await ok(s, { action: "prompt", agentId: agent.agentId, message: directive({ reply: "answer across the reload", delayMs: 3000 }) }))
      .prompt as { promptId: string };
    const state = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "state.json"), "utf8")) as { agents: { agentId: string; activePromptId?: string }[] };
    assert.equal(state.agents.find((a) => a.agentId === agent.agentId)?.activePromptId, promptId, "written through before the reload");
    const reattached = notified(s, /re-attached 1 sheep/);
    await s.command({ type: "prompt", message: "/test-reload" });
    await reattached;
    const [r] = (await ok(s, { action: "wait", promptId })).results as { status: string; text: string }[];
    assert.deepEqual([r!.status, r!.text], ["completed", "answer across the reload"]);
    const st = (await ok(s, { action: "status", agentId: agent.agentId })).status as { state: string; label: string };
    assert.deepEqual([st.state, st.label], ["idle", "survivor"]);
    await ok(s, { action: "close", agentId: agent.agentId });
  });

  it("a new shepherd on the same agent dir re-attaches the sheep of one that died, and closes them", async () => {
    const first = launch();
    const agent = (await ok(first, { action: "start", agent: "echo", label: "orphan" })).agent as { agentId: string; paneId: string };
    const { promptId } = (await ok(first, { action: "prompt", agentId: agent.agentId, message: directive({ reply: "still here", delayMs: 2000 }) })).prompt as {
      promptId: string;
    };
    first.proc.kill("SIGKILL"); // a crash: no chance to close anything
    await first.proc;
    assert.ok((await panes()).includes(agent.paneId), "the sheep outlived its shepherd");
    const second = launch();
    const reattached = notified(second, /re-attached 1 sheep/);
    await second.command({ type: "get_state" });
    await reattached;
    const [r] = (await ok(second, { action: "wait", promptId })).results as { status: string; text: string }[];
    assert.deepEqual([r!.status, r!.text], ["completed", "still here"]);
    const herd = (await ok(second, { action: "herd" })).agents as { agentId: string }[];
    assert.deepEqual(
      herd.map((a) => a.agentId),
      [agent.agentId],
    );
    await ok(second, { action: "close", agentId: agent.agentId });
    assert.ok(!(await panes()).includes(agent.paneId));
  });

  it("a live shepherd's sheep are not taken by another one", async () => {
    const owner = shepherds[shepherds.length - 1]!;
    const agent = (await ok(owner, { action: "start", agent: "echo", label: "owned" })).agent as { agentId: string; paneId: string };
    const other = launch();
    await other.command({ type: "get_state" });
    const herd = (await ok(other, { action: "herd" })).agents as unknown[];
    assert.deepEqual(herd, [], "the other shepherd's herd is its own");
    const all = await ok(other, { action: "herd", all: true });
    assert.deepEqual(
      (all.others as { agentId: string }[]).map((o) => o.agentId),
      [agent.agentId],
      "asked for all, it lists the other shepherd's sheep",
    );
    const refused = await other.call({ action: "close", agentId: agent.agentId });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /^\[not_owned\] sheep .* belongs to another running shepherd/);
    assert.ok((await panes()).includes(agent.paneId), "the pane was not touched");
    await ok(owner, { action: "close", agentId: agent.agentId });
  });
});
