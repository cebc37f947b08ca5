/**
 * Lenient parameters through a real pi: the scripted model sends arrays as JSON text, numbers and
 * booleans as strings, the way real models sometimes do. pi checks (and coerces) the arguments
 * before the tool runs, so only a real pi shows what actually reaches the shepherd.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { recordTrustDecision } from "../../src/project-trust.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { killSheep } from "../support/leftovers.ts";
import type { RpcShepherd, ToolOutcome } from "../support/rpc-shepherd.ts";
import { directive } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

const PROJECT_AGENT = "---\nname: proj\ndescription: the repository's agent\n---\nYou answer exactly as scripted.\n";

describe("lenient parameters through a real pi over RPC", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let t: PrivateTmux;
  let agentDir: string;
  let shepherd: RpcShepherd;
  const sheepPids: number[] = [];

  const ok = (args: unknown): Promise<ToolOutcome> => shepherd.ok(args);
  const panes = async () => (await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n");
  const rememberPid = async (agentId: string) => {
    const status = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "sheep", agentId, "status.json"), "utf8")) as { pid: number };
    sheepPids.push(status.pid);
  };
  const start = async (args: Record<string, unknown>) => {
    const agent = (await ok({ action: "start", ...args })).details.agent as { agentId: string };
    await rememberPid(agent.agentId);
    return agent.agentId;
  };
  const prompt = async (agentId: string, reply: string, delayMs = 0) =>
    ((await ok({ action: "prompt", agentId, message: directive({ reply, delayMs }) })).details.prompt as { promptId: string }).promptId;
  type Item = { promptId?: string; status: string; text?: string; agentId?: string; step?: number };

  before(async () => {
    // The user's own settings never ask, so only the call's confirmProjectAgents decides.
    // No warm pool (warmMemory 0): delegated sheep close, as its pane counts expect.
    world = await e2eWorld("lenient", { agent: { shepherdSettings: { confirmProjectAgents: false, warmMemory: 0 } }, work: true });
    ({ tmux: t, agentDir } = world);
    const work = world.cwd;
    await mkdir(join(work, ".pi", "agents"), { recursive: true });
    await writeFile(join(work, ".pi", "agents", "proj.md"), PROJECT_AGENT);
    await recordTrustDecision(agentDir, work, "trusted"); // as /shepherd trust records the person's yes
    world.defer(() => killSheep(agentDir, sheepPids));
    shepherd = world.shepherd();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("wait takes promptIds as JSON text or as a comma list, and timeout as text", async () => {
    const a = await start({ agent: "echo", label: "alpha" });
    const b = await start({ agent: "echo", label: "beta" });
    const exactA = 'alpha says "hi" [1, 2]\n  ünï 🐑';
    const exactB = "beta, with a comma";
    const pa = await prompt(a, exactA, 800);
    const pb = await prompt(b, exactB, 300);
    const waited = await ok({ action: "wait", promptIds: JSON.stringify([pa, pb]), timeout: "30" });
    assert.deepEqual(
      (waited.details.results as Item[]).map((r) => [r.promptId, r.status, r.text]),
      [
        [pa, "completed", exactA],
        [pb, "completed", exactB],
      ],
    );

    const qa = await prompt(a, "second from alpha");
    const qb = await prompt(b, "second from beta");
    const listed = await ok({ action: "wait", promptIds: `${qb}, ${qa}`, timeout: "30" });
    assert.deepEqual(
      (listed.details.results as Item[]).map((r) => [r.promptId, r.status, r.text]),
      [
        [qb, "completed", "second from beta"],
        [qa, "completed", "second from alpha"],
      ],
    );
    await ok({ action: "close", agentId: a });
    await ok({ action: "close", agentId: b });
  });

  it('start takes confirmProjectAgents as text: "false" starts without asking, "true" asks', async () => {
    const asked: Record<string, unknown>[] = [];
    const stop = shepherd.answerDialogs((request) => {
      asked.push(request);
      return { confirmed: false };
    });
    try {
      const started = await start({ agent: "proj", agentScope: "project", label: "proj-1", confirmProjectAgents: "false" });
      assert.equal(asked.length, 0, 'no question when the call says "false"');
      await ok({ action: "close", agentId: started });
      const refused = await shepherd.call({ action: "start", agent: "proj", agentScope: "project", label: "proj-2", confirmProjectAgents: "true" });
      assert.equal(asked.length, 1, 'the call\'s "true" asked the user');
      assert.equal(refused.isError, true);
      assert.match(refused.text, /^\[project_agent_refused\] project agent "proj" .* was not approved/);
    } finally {
      stop();
    }
  });

  it("delegate takes tasks as JSON text and keepOpen as text", async () => {
    const tasks = [
      { agent: "echo", task: directive({ reply: "task one's [exact] text" }) },
      { agent: "echo", task: directive({ reply: "task two\nsecond line" }) },
    ];
    const r = await ok({ action: "delegate", tasks: JSON.stringify(tasks), keepOpen: "true" });
    const items = r.details.results as Item[];
    assert.equal(r.details.mode, "parallel");
    assert.deepEqual(
      items.map((i) => [i.status, i.text]),
      [
        ["completed", "task one's [exact] text"],
        ["completed", "task two\nsecond line"],
      ],
    );
    for (const item of items) {
      await rememberPid(item.agentId!);
      const status = (await ok({ action: "status", agentId: item.agentId })).details.status as { state: string; paneAlive: boolean };
      assert.deepEqual([status.state, status.paneAlive], ["idle", true], 'keepOpen "true" kept the sheep');
      await ok({ action: "close", agentId: item.agentId });
    }
  });

  it("delegate takes chain as JSON text", async () => {
    const chain = [
      { agent: "echo", task: directive({ reply: "first" }) },
      { agent: "echo", task: '#script {"reply":"after <{previous}>"}' },
    ];
    const r = await ok({ action: "delegate", chain: JSON.stringify(chain) });
    assert.equal(r.details.mode, "chain");
    assert.deepEqual(
      (r.details.results as Item[]).map((i) => [i.step, i.status, i.text]),
      [
        [1, "completed", "first"],
        [2, "completed", "after <first>"],
      ],
    );
    // A delegated sheep closes after the call returned, off its path.
    for (let i = 0; i < 100 && (await panes()).length > 1; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await panes(), [t.userPane], "every sheep this file started is closed");
  });
});
