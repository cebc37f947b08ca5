/**
 * The panel's history and the work from the page, over HTTP on a real shepherd core in memory:
 * closed sheep stay listed (filters), their answers and evidence stay on their page, the totals
 * never shrink when a sheep closes, delegations are groups of their tasks, land / sync / resume /
 * remove worktree are the tool's own commands, and the start form's options come from settings.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MemoryWorkspace } from "../../support/memory-workspace.ts";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";
import { parseAgentId, parsePromptId } from "../../../src/domain/ids.ts";
import type { DelegationRecord } from "../../../src/ports/types.ts";
import { MAX_ANSWER_CHARS } from "../../../src/panel/views.ts";

const JSON_TYPE = { "content-type": "application/json" };

interface Listed {
  sheep: { agentId: string; label: string; state: string; agent: string; host: string; sessionPath: string; delegationId?: string }[];
  totals: { sheep: number; closed: number; input: number; output: number; cost: number; prompts: number; today: { input: number; day: string } };
}

describe("panel: history, totals and the work from the page", () => {
  let w: PanelWorld;
  let ws: MemoryWorkspace;
  const get = (path: string) => ask(w.port, { path, headers: w.authed() });
  const post = (path: string, body: object) => ask(w.port, { method: "POST", path, headers: w.authed(JSON_TYPE), body });
  const list = async (q = "") => {
    const a = await get(`/api/v1/sheep${q}`);
    assert.equal(a.status, 200, a.text);
    return a.json() as Listed;
  };
  before(async () => {
    w = await panelWorld({
      workspace: (cwd) => {
        ws = new MemoryWorkspace([cwd]);
        return ws;
      },
      settings: { models: { fast: "anthropic/claude-haiku-4-5" } },
    });
  });
  after(() => w.close());

  /** A prompt that settles with usage. */
  async function spend(agentId: string, input: number, cost: number): Promise<string> {
    const { promptId } = await w.shepherd.prompt(parseAgentId(agentId), "count the lines");
    w.world.mem(agentId).outbox.set(promptId, {
      promptId,
      status: "completed",
      text: `<img src=x onerror=alert(1)> counted ${input}`,
      usage: { input, output: 1, cost },
      startedAt: new Date(Date.now() - 1000).toISOString(),
      finishedAt: new Date().toISOString(),
    });
    w.world.ring(agentId);
    await w.shepherd.wait([parsePromptId(promptId)], { timeoutSec: 5 });
    return promptId;
  }

  it("totals count a closed sheep's spending: closing it (or the records forgetting it) never shrinks them", async () => {
    const a = await w.start("spender");
    await spend(a.agentId, 100, 0.25);
    const before = (await list()).totals;
    assert.equal(before.input, 100);
    assert.equal(before.cost, 0.25);
    assert.equal(before.today.input, 100, "finished today");
    assert.equal((await post(`/api/v1/sheep/${a.agentId}/close`, {})).status, 200);
    const afterClose = (await list()).totals;
    assert.equal(afterClose.input, 100, "the closed sheep's tokens still count");
    assert.equal(afterClose.cost, 0.25);
    assert.equal(afterClose.today.input, 100);
    assert.equal(afterClose.closed, before.closed + 1);
    // 64 more closed sheep: the records let go of the first and its prompts; the totals do not.
    for (let i = 0; i < 65; i++) {
      const s = await w.start(`filler-${i}`);
      await w.shepherd.close(parseAgentId(s.agentId));
    }
    assert.equal(w.shepherd.registry.agents.has(a.agentId), false, "the first closed sheep was forgotten by the records");
    const later = (await list()).totals;
    assert.equal(later.input, 100);
    assert.equal(later.cost, 0.25);
  });

  it("GET /api/v1/sheep filters: live by default, closed, all, a state; a label (any part, any case), an agent, a host; anything else is [invalid_params]", async () => {
    const live = await w.start("Hist-Live");
    const gone = await w.start("hist-gone");
    await spend(gone.agentId, 7, 0);
    await w.shepherd.close(parseAgentId(gone.agentId));
    const labels = (l: Listed) => l.sheep.map((s) => s.label).filter((x) => x.startsWith("Hist") || x.startsWith("hist"));
    assert.deepEqual(labels(await list()), ["Hist-Live"]);
    assert.deepEqual(labels(await list("?state=closed")), ["hist-gone"]);
    assert.deepEqual(labels(await list("?state=all&label=HIST")).sort(), ["Hist-Live", "hist-gone"]);
    assert.deepEqual(labels(await list("?state=idle&label=hist")), ["Hist-Live"]);
    assert.deepEqual(labels(await list("?state=all&label=hist&agent=scout&host=local")).sort(), ["Hist-Live", "hist-gone"]);
    assert.deepEqual(labels(await list("?state=all&label=hist&agent=nobody")), []);
    assert.deepEqual(labels(await list("?state=all&label=hist&host=gpu")), []);
    const closed = (await list("?state=closed&label=hist-gone")).sheep[0]!;
    assert.equal(closed.state, "closed");
    assert.match(closed.sessionPath, /session/, "its session file's path is listed");
    for (const q of ["?state=dead", "?colour=red", "?state=all&state=live", `?label=${"x".repeat(300)}`]) {
      const r = await get(`/api/v1/sheep${q}`);
      assert.equal(r.status, 400, q);
      assert.equal((r.json() as { code: string }).code, "invalid_params");
      assert.match((r.json() as { message: string }).message, /^\[invalid_params\] /);
    }
    assert.equal((await ask(w.port, { path: "/api/v1/sheep?state=closed" })).status, 401, "the same auth");
    await w.shepherd.close(parseAgentId(live.agentId));
  });

  it("a closed sheep's page keeps its prompts with their answers (as text), usage, evidence counts and session file", async () => {
    const s = await w.start("hist-answers");
    const promptId = await spend(s.agentId, 9, 0.5);
    await w.shepherd.close(parseAgentId(s.agentId));
    const d = (await get(`/api/v1/sheep/${s.agentId}`)).json() as {
      state: string;
      sessionPath: string;
      prompts: { promptId: string; status: string; answer?: string; usage?: { input: number }; changes?: object; evidence: boolean }[];
    };
    assert.equal(d.state, "closed");
    assert.ok(d.sessionPath.length > 0);
    const p = d.prompts.find((x) => x.promptId === promptId)!;
    assert.equal(p.status, "completed");
    assert.equal(p.answer, "<img src=x onerror=alert(1)> counted 9", "the sheep's words as JSON text");
    assert.deepEqual(p.usage, { input: 9, output: 1, cost: 0.5 });
    assert.equal(p.evidence, true);
    assert.deepEqual(p.changes, { fileCount: 1, insertions: 2, deletions: 1 });
  });

  it("an answer past MAX_ANSWER_CHARS is cut and says so; the session file holds it whole", async () => {
    const s = await w.start("hist-long");
    const { promptId } = await w.shepherd.prompt(parseAgentId(s.agentId), "write a lot");
    w.world.answer(s.agentId, promptId, "x".repeat(MAX_ANSWER_CHARS + 10));
    await w.shepherd.wait([parsePromptId(promptId)], { timeoutSec: 5 });
    const d = (await get(`/api/v1/sheep/${s.agentId}`)).json() as { prompts: { answer?: string; answerTruncated?: boolean }[] };
    assert.equal(d.prompts[0]!.answer!.length, MAX_ANSWER_CHARS);
    assert.equal(d.prompts[0]!.answerTruncated, true);
    await w.shepherd.close(parseAgentId(s.agentId));
  });

  it("GET /api/v1/delegations lists each background delegation as one group with its tasks", async () => {
    const s = await w.start("hist-task");
    const d: DelegationRecord = {
      delegationId: "d_0000000001",
      owner: w.shepherd.owner,
      mode: "parallel",
      keepOpen: false,
      createdAt: new Date().toISOString(),
      items: [
        {
          agent: "scout",
          task: "look at a\nand more",
          agentId: parseAgentId(s.agentId),
          promptId: "p_0000000009",
          status: "completed",
          usage: { input: 3, output: 4 },
        },
        { agent: "scout", task: "look at b" },
      ],
      done: true,
    };
    w.shepherd.registry.delegations.set(d.delegationId, d);
    // Another shepherd's delegation (as a store could hold) is not this one's to show.
    w.shepherd.registry.delegations.set("d_0000000002", { ...d, delegationId: "d_0000000002", owner: "someone-else" });
    const r = (await get("/api/v1/delegations")).json() as { delegations: { delegationId: string; mode: string; done: boolean; tasks: object[] }[] };
    const got = r.delegations.find((x) => x.delegationId === "d_0000000001")!;
    assert.equal(got.mode, "parallel");
    assert.equal(got.done, true);
    assert.deepEqual(got.tasks, [
      {
        agent: "scout",
        task: "look at a",
        agentId: s.agentId,
        label: "hist-task",
        promptId: "p_0000000009",
        status: "completed",
        usage: { input: 3, output: 4 },
      },
      { agent: "scout", task: "look at b" },
    ]);
    const listed = (await list("?label=hist-task")).sheep[0]!;
    assert.equal(listed.delegationId, "d_0000000001", "the sheep names its delegation");
    assert.equal(r.delegations.filter((x) => x.delegationId === "d_0000000002").length, 0, "another shepherd's is not listed");
    assert.equal((await get("/api/v1/delegations?x=1")).status, 400);
    w.shepherd.registry.delegations.delete(d.delegationId);
    w.shepherd.registry.delegations.delete("d_0000000002");
  });

  it("land, sync, resume and remove-worktree run the tool's own commands, with its codes; …/branch says where the branch stands", async () => {
    const iso = (await post("/api/v1/start", { agent: "scout", label: "hist-iso", isolate: true })).json() as { agentId: string };
    const plain = await w.start("hist-plain");
    const wt = w.shepherd.registry.agents.get(iso.agentId)!.worktree!;
    const landed = await post(`/api/v1/sheep/${iso.agentId}/land`, { squash: true, message: "feat: the sheep's work" });
    assert.equal(landed.status, 200, landed.text);
    assert.equal((landed.json() as { landed: boolean }).landed, true);
    assert.ok(ws.calls.includes(`land ${wt.path} squash "feat: the sheep's work"`), ws.calls.join("\n"));
    assert.ok(
      w.audited.some((e) => e.event === "land" && e.edge === "api"),
      `the core told the audit log, from the API's edge: ${JSON.stringify(w.audited.filter((e) => e.event === "land"))}`,
    );
    const synced = await post(`/api/v1/sheep/${iso.agentId}/sync`, {});
    assert.equal(synced.status, 200, synced.text);
    assert.ok(ws.calls.includes(`sync ${wt.path} hist-iso`));
    // The tool's own refusals: a sheep with no worktree, a field land does not take.
    const refused = await post(`/api/v1/sheep/${plain.agentId}/land`, {});
    assert.equal(refused.status, 400, refused.text);
    assert.match((refused.json() as { message: string }).message, /^\[invalid_params\] .*no worktree of its own/);
    assert.equal((await post(`/api/v1/sheep/${iso.agentId}/land`, { force: true })).status, 400);
    const tooLong = await post(`/api/v1/sheep/${iso.agentId}/land`, { message: "x".repeat(10_001) });
    assert.equal((tooLong.json() as { code: string }).code, "invalid_params", "land's own limit on a message");
    // Where the branch stands: unknown where the workspace cannot tell, else its counts.
    assert.deepEqual((await get(`/api/v1/sheep/${iso.agentId}/branch`)).json(), { known: false });
    ws.branches.set(wt.path, {
      exists: true,
      branch: wt.branch,
      into: "main",
      ahead: 2,
      behind: 1,
      conflicts: ["a.txt"],
      uncommitted: 0,
      worked: true,
      landed: false,
    });
    assert.deepEqual((await get(`/api/v1/sheep/${iso.agentId}/branch`)).json(), {
      known: true,
      exists: true,
      branch: wt.branch,
      into: "main",
      ahead: 2,
      behind: 1,
      conflicts: ["a.txt"],
      uncommitted: 0,
      worked: true,
      landed: false,
    });
    const noBranch = await get(`/api/v1/sheep/${plain.agentId}/branch`);
    assert.equal(noBranch.status, 400);
    // Closed, its worktree kept; removed from the page as the tool's close --remove-worktree.
    await w.shepherd.close(parseAgentId(iso.agentId));
    const removed = await post(`/api/v1/sheep/${iso.agentId}/remove-worktree`, {});
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(ws.removed, [wt.path]);
    assert.equal((removed.json() as { worktree?: { removed: boolean } }).worktree?.removed, true);
    // Resume: the tool's start with resume, its rules too (the removed worktree was its cwd).
    const noCwd = await post(`/api/v1/sheep/${iso.agentId}/resume`, {});
    assert.equal(noCwd.status, 400, noCwd.text);
    assert.match((noCwd.json() as { message: string }).message, /^\[invalid_params\] cwd .* is not an existing directory/);
    await w.shepherd.close(parseAgentId(plain.agentId));
    const resumed = await post(`/api/v1/sheep/${plain.agentId}/resume`, { label: "hist-again" });
    assert.equal(resumed.status, 200, resumed.text);
    const again = resumed.json() as { agentId: string; label: string };
    assert.notEqual(again.agentId, plain.agentId);
    assert.equal(again.label, "hist-again");
    assert.equal(w.shepherd.registry.agents.get(again.agentId)?.resumedFrom, plain.agentId);
    assert.equal((await post(`/api/v1/sheep/${plain.agentId}/resume`, { agent: "x" })).status, 400, "resume takes no agent");
    // Without the token nothing runs.
    assert.equal((await ask(w.port, { method: "POST", path: `/api/v1/sheep/${again.agentId}/land`, headers: JSON_TYPE, body: {} })).status, 401);
    await w.shepherd.close(parseAgentId(again.agentId));
  });

  it("GET /api/v1/start-options: the user's model aliases, the hosts (this machine first), placements", async () => {
    const r = await get("/api/v1/start-options");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), {
      models: [{ alias: "fast", model: "anthropic/claude-haiku-4-5" }],
      hosts: ["local"],
      placements: ["tab", "pane", "workspace"],
      directions: ["right", "down"],
    });
    assert.equal((await get("/api/v1/start-options?x=1")).status, 400);
  });
});

describe("panel: the start form's agents", () => {
  it("a trusted project's own agents are offered too, with their source", async () => {
    const w = await panelWorld({ projectTrusted: true, settings: { agentScope: "both" } });
    try {
      const r = await ask(w.port, { path: "/api/v1/agents", headers: w.authed() });
      const { agents } = r.json() as { agents: { name: string; source: string; description: string }[] };
      assert.deepEqual(agents.map((a) => [a.name, a.source, a.description]).sort(), [
        ["helper", "project", "the repository's"],
        ["scout", "bundled", "looks around"],
      ]);
    } finally {
      await w.close();
    }
  });
});
