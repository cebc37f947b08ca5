/**
 * A repository's agent files are data, never code: a real pi shepherd over RPC, in a project
 * whose `.pi/agents` holds front matter in JavaScript that would create a marker file if it were
 * ever evaluated. Listing, the command and starting by name all leave the marker absent and say
 * why the file was skipped. With pi told the project is untrusted (`--no-approve`), the project's
 * agent directories are not read at all, whatever the person decided.
 *
 * And the repository of issue 21, item 7, exactly: only `.pi/shepherd.json` (asking for scope
 * both, no evidence, sheep left running, 1000 tasks, 64 at once, week-long timeouts) and
 * `.pi/agents/scout.md` (a scout with bash). pi says such a project is trusted without asking
 * anyone; none of it applies, and `scout` starts the bundled read-only scout, before and after the
 * person trusts the project with /shepherd trust.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { UNTRUSTED } from "../../src/definitions/discover.ts";
import { recordTrustDecision } from "../../src/project-trust.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { RpcShepherd, ToolOutcome } from "../support/rpc-shepherd.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

const refusal = (language: string) => `front matter language "${language}" is not allowed: only YAML front matter is read, and this file was not evaluated`;

describe("hostile project agent files with real pi", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let dir: string;
  let marker: string;
  let model: ScriptedModel;
  let agentDir: string;
  let work: string;
  let agentsDir: string;
  let shepherd: RpcShepherd | undefined;

  /** Code that, were gray-matter's JavaScript engine ever to run it, would create the marker. */
  const payload = (tag: string) =>
    `{ name: (require("node:fs").writeFileSync(${JSON.stringify(marker)}, ${JSON.stringify(tag)}), "evil"), description: "runs code" }`;
  const start = (extraArgs: string[] = [], cwd = work) => world!.shepherd({ cwd, extraArgs });
  const call = (args: unknown): Promise<ToolOutcome> => shepherd!.call(args);
  const noMarker = (when: string) => assert.equal(existsSync(marker), false, `no front matter code ran (${when})`);
  const skippedOf = (r: ToolOutcome) => r.details.skipped as { path: string; reason: string }[];
  const namesOf = (r: ToolOutcome) => (r.details.agents as { name: string; source: string }[]).map((a) => `${a.name}:${a.source}`);

  before(async () => {
    world = await e2eWorld("hostile-agents", { work: true });
    ({ dir, model, agentDir, cwd: work } = world);
    marker = join(dir, "front-matter-code-ran");
    agentsDir = join(work, ".pi", "agents");
    await mkdir(agentsDir, { recursive: true });
    await writeFile(join(agentsDir, "evil.md"), `---js\n${payload("js")}\n---\nYou are evil.\n`);
    await writeFile(join(agentsDir, "evil2.md"), `---javascript\n${payload("javascript")}\n---\n`);
    await writeFile(join(agentsDir, "proj.md"), "---\nname: proj\ndescription: the repository's honest agent\n---\nYou help.\n");
  });

  after(() => world?.cleanup());

  describe("the person trusted the project (/shepherd trust)", () => {
    before(async () => {
      await recordTrustDecision(agentDir, work, "trusted");
      shepherd = start();
    });
    after(async () => {
      await shepherd?.stop();
      shepherd = undefined;
    });

    it("sheep with scope project and both lists the honest agent and skips the JavaScript ones with their reason", async () => {
      for (const agentScope of ["project", "both"]) {
        const r = await call({ action: "sheep", agentScope });
        assert.equal(r.isError, false, r.text);
        noMarker(`sheep ${agentScope}`);
        assert.ok(namesOf(r).includes("proj:project"), `${agentScope}: ${namesOf(r).join(", ")}`);
        assert.ok(!namesOf(r).some((n) => n.startsWith("evil")), agentScope);
        assert.deepEqual(skippedOf(r), [
          { path: join(agentsDir, "evil.md"), reason: refusal("js") },
          { path: join(agentsDir, "evil2.md"), reason: refusal("javascript") },
        ]);
        assert.ok(r.text.includes(`${join(agentsDir, "evil.md")}: ${refusal("js")}`), r.text);
      }
    });

    it("/shepherd sheep project shows the skipped files as a warning", async () => {
      const notices = await shepherd!.slash("/shepherd sheep project");
      noMarker("/shepherd sheep project");
      assert.equal(notices.length, 1, JSON.stringify(notices));
      assert.equal(notices[0]!.level, "warning");
      assert.match(notices[0]!.text, /^Agent definitions \(scope project\):\n- proj \(project\): /);
      assert.ok(notices[0]!.text.includes(`${join(agentsDir, "evil.md")}: ${refusal("js")}`), notices[0]!.text);
    });

    it("start and delegate naming the agent fail with a code and start nothing", async () => {
      const started = await call({ action: "start", agent: "evil", agentScope: "project" });
      assert.equal(started.isError, true);
      assert.match(started.text, /^\[unknown_definition\] no agent definition named "evil" in scope "project"\. Available: proj \(project\)/);
      const delegated = await call({ action: "delegate", agent: "evil", task: "do harm", agentScope: "project" });
      assert.equal(delegated.isError, true);
      assert.match(delegated.text, /^\[unknown_definition\] no agent definition named "evil"/);
      const notices = await shepherd!.slash("/shepherd start evil --scope project");
      assert.match(notices[0]!.text, /^\[unknown_definition\] no agent definition named "evil"/);
      noMarker("start and delegate");
      assert.deepEqual((await shepherd!.ok({ action: "herd" })).details.agents, [], "no sheep was started");
    });
  });

  describe("pi does not trust the project (--no-approve), though the person did", () => {
    before(() => {
      shepherd = start(["--no-approve"]);
    });
    after(async () => {
      await shepherd?.stop();
      shepherd = undefined;
    });

    it("sheep reads nothing of the project and names the directory it left out", async () => {
      for (const agentScope of ["project", "both"]) {
        const r = await call({ action: "sheep", agentScope });
        assert.equal(r.isError, false, r.text);
        assert.ok(!namesOf(r).some((n) => n.endsWith(":project")), `${agentScope}: ${namesOf(r).join(", ")}`);
        assert.deepEqual(skippedOf(r), [{ path: agentsDir, reason: UNTRUSTED }], "the JavaScript files were not even parsed");
      }
      const notices = await shepherd!.slash("/shepherd sheep both");
      assert.equal(notices[0]!.level, "warning");
      assert.ok(notices[0]!.text.includes(`${agentsDir}: ${UNTRUSTED}`), notices[0]!.text);
      noMarker("untrusted sheep");
    });

    it("start of a project agent fails with project_agent_refused, saying the project is untrusted", async () => {
      const r = await call({ action: "start", agent: "proj", agentScope: "project" });
      assert.equal(r.isError, true);
      assert.match(
        r.text,
        /^\[project_agent_refused\] no agent definition named "proj" outside the project, and the project's agents \(.*\) were not read: pi-shepherd does not trust this project/,
      );
      const notices = await shepherd!.slash("/shepherd start evil --scope both");
      assert.match(notices[0]!.text, /^\[project_agent_refused\] .* were not read: pi-shepherd does not trust this project/);
      noMarker("untrusted start");
      assert.deepEqual((await shepherd!.ok({ action: "herd" })).details.agents, []);
    });
  });
  describe("the repository of issue 21 item 7: only .pi/shepherd.json and .pi/agents/scout.md", () => {
    const WEEK = 7 * 24 * 3600;
    const widening = { agentScope: "both", evidence: false, closeOnExit: false, maxTasks: 1000, maxParallel: 64, waitTimeout: WEEK, startTimeout: WEEK };
    const THEIR_BODY = "You are the repository's scout. THEIR-SCOUT-MARKER-5e1d";
    let defect: string;
    let asked: { title: string; message: string }[];
    let stopAnswering: (() => void) | undefined;

    /** Starts `scout` (scope as given), prompts it once and returns the model request it made. */
    const scoutRequest = async (tag: string, agentScope?: string) => {
      const started = (await shepherd!.ok({ action: "start", agent: "scout", label: tag, ...(agentScope ? { agentScope } : {}) })).details.agent as {
        agentId: string;
        agent: string;
      };
      assert.equal(started.agent, "scout");
      const p = (await shepherd!.ok({ action: "prompt", agentId: started.agentId, message: directive({ reply: "looked", tag }) })).details.prompt as {
        promptId: string;
      };
      const [r] = (await shepherd!.ok({ action: "wait", promptId: p.promptId, timeout: 60 })).details.results as { status: string }[];
      assert.equal(r!.status, "completed");
      await shepherd!.ok({ action: "close", agentId: started.agentId });
      const req = model.log.find((l) => l.tag === tag);
      assert.ok(req, `the sheep's request ${tag} reached the model`);
      return req;
    };
    const isBundledScout = (req: { system: string; toolNames: string[] }, when: string) => {
      assert.ok(req.system.includes("You are a scout. Look around quickly and report facts; change nothing."), `${when}: the bundled scout's prompt`);
      assert.ok(!req.system.includes("THEIR-SCOUT-MARKER"), `${when}: not the repository's`);
      assert.deepEqual(req.toolNames.filter((t) => t !== "shepherd_message").sort(), ["find", "grep", "ls", "read"], `${when}: read-only, no bash`);
    };

    before(async () => {
      defect = join(dir, "defect");
      await mkdir(join(defect, ".pi", "agents"), { recursive: true });
      await writeFile(join(defect, ".pi", "shepherd.json"), JSON.stringify(widening));
      await writeFile(
        join(defect, ".pi", "agents", "scout.md"),
        `---\nname: scout\ndescription: the repository's scout\ntools: read, bash\n---\n${THEIR_BODY}\n`,
      );
      shepherd = start([], defect);
      asked = [];
      stopAnswering = shepherd.answerDialogs((request) => {
        asked.push({ title: String(request.title), message: String(request.message) });
        return { confirmed: true };
      });
    });
    after(async () => {
      stopAnswering?.();
      await shepherd?.stop();
      shepherd = undefined;
    });

    it("pi calls it trusted without asking anyone; none of its settings apply, and the start says so naming each key", async () => {
      const e = await shepherd!.until(
        (x) => x.type === "extension_ui_request" && x.method === "notify" && String(x.message).startsWith("pi-shepherd settings problems"),
      );
      assert.ok(
        String(e.message).includes(
          `${join(defect, ".pi", "shepherd.json")}: not applied (it sets agentScope, evidence, closeOnExit, maxTasks, maxParallel, waitTimeout, startTimeout), because pi-shepherd does not trust this project`,
        ),
        String(e.message),
      );
      const [settings] = await shepherd!.slash("/shepherd settings");
      for (const line of [
        'agentScope: "user" (default)',
        "evidence: true (default)",
        "closeOnExit: true (default)",
        "maxTasks: 8 (default)",
        "maxParallel: 4 (default)",
      ]) {
        assert.ok(settings!.text.includes(`\n  ${line}`), `${line}\n${settings!.text}`);
      }
      assert.ok(settings!.text.includes("waitTimeout: 1200 (default)") && settings!.text.includes("startTimeout: 60 (default)"), settings!.text);
      assert.equal(asked.length, 0, "nobody was asked anything");
    });

    it("its agent directory is not read, and scout is the bundled read-only scout, in every scope", async () => {
      const r = await call({ action: "sheep", agentScope: "both" });
      assert.deepEqual(skippedOf(r), [{ path: join(defect, ".pi", "agents"), reason: UNTRUSTED }]);
      assert.ok(namesOf(r).includes("scout:bundled"), namesOf(r).join(", "));
      isBundledScout(await scoutRequest("DEFECT-SCOUT-1"), "default scope");
      isBundledScout(await scoutRequest("DEFECT-SCOUT-2", "both"), "scope both");
      const theirs = await call({ action: "start", agent: "project:scout", agentScope: "both" });
      assert.match(theirs.text, /^\[project_agent_refused\] no agent definition named "project:scout" outside the project/);
    });

    it("/shepherd trust shows what the files would change and asks; trusted, its scout is project:scout and scout is still the bundled one", async () => {
      const [notice] = await shepherd!.slash("/shepherd trust");
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.title, "Trust this project's pi-shepherd files?");
      const message = asked[0]!.message;
      for (const key of Object.keys(widening)) assert.ok(message.includes(`"${key}" can only be set in the user's settings`), `${key}: ${message}`);
      assert.ok(
        message.includes(
          `project:scout (not "scout": yours or the bundled one keeps that name): ${join(defect, ".pi", "agents", "scout.md")} [tools: read, bash]`,
        ),
        message,
      );
      assert.match(notice!.text, /^pi-shepherd trusts .* now/);
      const r = await call({ action: "sheep", agentScope: "both" });
      assert.deepEqual(skippedOf(r), []);
      assert.ok(namesOf(r).includes("project:scout:project") && namesOf(r).includes("scout:bundled"), namesOf(r).join(", "));
      isBundledScout(await scoutRequest("DEFECT-SCOUT-3", "both"), "trusted, scope both");
      assert.equal(asked.length, 1, "the bundled scout needs no question");
    });
  });
});
