import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../../src/ports/types.ts";
import { loadSettings } from "../../../src/settings.ts";
import { dispatch } from "../../../src/edge/dispatch.ts";
import { approveDefinition, type TrustContext } from "../../../src/context/trust.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";

const projectDef: AgentDefinition = { name: "helper", description: "d", source: "project", path: "/repo/.pi/agents/helper.md" };

function ui(answer: boolean) {
  const asked: { title: string; message: string }[] = [];
  return {
    asked,
    confirm: async (title: string, message: string) => {
      asked.push({ title, message });
      return answer;
    },
  };
}

/** A project the person trusted with /shepherd trust; each test takes away what it needs to. */
const base = (over: Partial<TrustContext> = {}): TrustContext => ({
  hasUI: true,
  allowWithoutUI: false,
  userConfirms: true,
  isProjectTrusted: () => true,
  ...over,
});

describe("trust: project agents", () => {
  it("runs a project agent after the user confirms, naming its file", async () => {
    const u = ui(true);
    await approveDefinition(projectDef, true, base({ confirm: u.confirm }));
    assert.equal(u.asked.length, 1);
    assert.match(u.asked[0]!.message, /\/repo\/\.pi\/agents\/helper\.md/);
    assert.match(u.asked[0]!.message, /"helper"/);
  });

  it("draws the repository's path in the dialog without the escape sequences its folder names carry", async () => {
    const u = ui(true);
    const hostile = { ...projectDef, path: "/repo/\u001b]2;OWNED\u0007x\u001b[2J/.pi/agents/helper.md" };
    await approveDefinition(hostile, true, base({ confirm: u.confirm }));
    assert.doesNotMatch(u.asked[0]!.message, /[\u001b\u0007]/);
    assert.match(u.asked[0]!.message, /\/repo\/x\/\.pi\/agents\/helper\.md/);
  });

  it("refuses it when the user says no", async () => {
    const u = ui(false);
    await assert.rejects(approveDefinition(projectDef, true, base({ confirm: u.confirm })), /^ShepherdError: \[project_agent_refused\] .*was not approved/);
    assert.equal(u.asked.length, 1);
  });

  it("refuses it without a UI, unless the user's own settings allow that", async () => {
    await assert.rejects(
      approveDefinition(projectDef, true, base({ hasUI: false })),
      /^ShepherdError: \[project_agent_refused\] .*no UI to ask.*allowProjectAgentsWithoutUI/,
    );
    const u = ui(true);
    await assert.rejects(approveDefinition(projectDef, true, base({ hasUI: false, confirm: u.confirm })), /\[project_agent_refused\]/);
    assert.equal(u.asked.length, 0, "no dialog is attempted without a UI");
    await approveDefinition(projectDef, true, base({ hasUI: false, allowWithoutUI: true }));
  });

  it("refuses every project agent of an untrusted project, without asking; no trust rule at all is untrusted", async () => {
    const u = ui(true);
    const { isProjectTrusted: _, ...noRule } = base({ confirm: u.confirm, allowWithoutUI: true });
    await assert.rejects(
      approveDefinition(projectDef, true, noRule),
      /^ShepherdError: \[project_agent_refused\] .*this project is not trusted by pi-shepherd \(\/shepherd trust/,
    );
    await assert.rejects(
      approveDefinition(projectDef, true, base({ confirm: u.confirm, isProjectTrusted: () => false })),
      /^ShepherdError: \[project_agent_refused\] .*not trusted by pi-shepherd/,
    );
    await assert.rejects(
      approveDefinition(projectDef, false, base({ userConfirms: false, allowWithoutUI: true, isProjectTrusted: () => false })),
      /not trusted by pi-shepherd/,
    );
    assert.equal(u.asked.length, 0);
    await approveDefinition(projectDef, true, base({ confirm: u.confirm, isProjectTrusted: () => true }));
    assert.equal(u.asked.length, 1);
  });

  it("a model cannot skip the question; only the user's settings can", async () => {
    const u = ui(true);
    await approveDefinition(projectDef, false, base({ confirm: u.confirm }));
    assert.equal(u.asked.length, 1, "confirmProjectAgents:false from the call still asks while the user's setting says confirm");
    await approveDefinition(projectDef, false, base({ confirm: u.confirm, userConfirms: false }));
    assert.equal(u.asked.length, 1, "the user turned confirmation off and the call agreed");
    await approveDefinition(projectDef, true, base({ confirm: u.confirm, userConfirms: false }));
    assert.equal(u.asked.length, 2, "a call may always ask for more caution");
  });

  it("user and bundled agents need no confirmation", async () => {
    const u = ui(false);
    for (const source of ["user", "bundled"] as const) {
      await approveDefinition({ ...projectDef, source }, true, base({ confirm: u.confirm, hasUI: false, isProjectTrusted: () => false }));
    }
    assert.equal(u.asked.length, 0);
  });
});

describe("trust: a project settings file cannot turn it off", () => {
  let root: string;
  let agentDir: string;
  let repo: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-trust-"));
    agentDir = join(root, "agent");
    repo = join(root, "repo");
    await mkdir(join(repo, ".pi", "agents"), { recursive: true });
    await writeFile(join(repo, ".pi", "agents", "helper.md"), "---\nname: helper\ndescription: a repo's agent\n---\nDo as the repo says.\n");
    await writeFile(
      join(repo, ".pi", "shepherd.json"),
      JSON.stringify({ allowProjectAgentsWithoutUI: true, confirmProjectAgents: false, maxDepth: 5, agentScope: "project", placement: "pane" }),
    );
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("ignores the trust keys of .pi/shepherd.json, says so, and still refuses without a UI", async () => {
    const loaded = await loadSettings(agentDir, repo, { projectTrusted: true });
    assert.equal(loaded.settings.allowProjectAgentsWithoutUI, false);
    assert.equal(loaded.settings.confirmProjectAgents, true);
    assert.equal(loaded.settings.maxDepth, 0);
    assert.equal(loaded.settings.agentScope, "user");
    assert.equal(loaded.settings.placement, "pane", "a key a trusted project may set applies");
    for (const key of ["allowProjectAgentsWithoutUI", "confirmProjectAgents", "maxDepth", "agentScope"]) {
      assert.ok(
        loaded.problems.some((p) => p.includes(`"${key}" can only be set in the user's settings`)),
        `${key} is reported`,
      );
    }

    const world = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock: new FakeClock() });
    const ctx = (trust: { hasUI: boolean; confirm?: (t: string, m: string) => Promise<boolean> }) => ({
      shepherd,
      settings: loaded.settings,
      cwd: repo,
      agentDir,
      bundledDir: join(root, "no-bundled"),
      trust: { ...trust, isProjectTrusted: () => true },
    });
    await assert.rejects(
      dispatch({ action: "start", agent: "helper", agentScope: "project", confirmProjectAgents: false }, ctx({ hasUI: false })),
      /^ShepherdError: \[project_agent_refused\]/,
    );
    assert.deepEqual(world.calls, [], "no pane was created for a refused agent");

    const u = ui(true);
    const started = await dispatch(
      { action: "start", agent: "helper", agentScope: "project", confirmProjectAgents: false },
      ctx({ hasUI: true, confirm: u.confirm }),
    );
    assert.equal(u.asked.length, 1, "the user was asked despite the project's settings");
    assert.equal((started.details.agent as { agent: string }).agent, "helper");
  });
});
