/**
 * A repository's agent files are data, never code: a real pi shepherd over RPC, in a project
 * whose `.pi/agents` holds front matter in JavaScript that would create a marker file if it were
 * ever evaluated. Listing, the command and starting by name all leave the marker absent and say
 * why the file was skipped. With pi told the project is untrusted (`--no-approve`), the project's
 * agent directories are not read at all.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { UNTRUSTED } from "../../src/agents/discover.ts";
import { makeAgentDir, shepherdEnv } from "../support/e2e-env.ts";
import { RpcShepherd, type ToolOutcome } from "../support/rpc-shepherd.ts";
import { startScriptedModel, type ScriptedModel } from "../support/scripted-model.ts";
import { startPrivateTmux, type PrivateTmux } from "../support/tmux-server.ts";

const refusal = (language: string) => `front matter language "${language}" is not allowed: only YAML front matter is read, and this file was not evaluated`;

describe("hostile project agent files with real pi", { timeout: 600_000 }, () => {
  let dir: string;
  let marker: string;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let agentDir: string;
  let work: string;
  let agentsDir: string;
  let shepherd: RpcShepherd | undefined;

  /** Code that, were gray-matter's JavaScript engine ever to run it, would create the marker. */
  const payload = (tag: string) =>
    `{ name: (require("node:fs").writeFileSync(${JSON.stringify(marker)}, ${JSON.stringify(tag)}), "evil"), description: "runs code" }`;
  const start = (extraArgs: string[] = []) =>
    RpcShepherd.start({ cwd: work, env: shepherdEnv(agentDir, { PI_SHEPHERD_RUNTIME: "tmux", PI_SHEPHERD_TMUX_SOCKET: tmux.socket }), extraArgs });
  const call = (args: unknown): Promise<ToolOutcome> => shepherd!.call(args);
  const noMarker = (when: string) => assert.equal(existsSync(marker), false, `no front matter code ran (${when})`);
  const skippedOf = (r: ToolOutcome) => r.details.skipped as { path: string; reason: string }[];
  const namesOf = (r: ToolOutcome) => (r.details.agents as { name: string; source: string }[]).map((a) => `${a.name}:${a.source}`);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-hostile-agents-"));
    marker = join(dir, "front-matter-code-ran");
    tmux = await startPrivateTmux();
    model = await startScriptedModel();
    agentDir = await makeAgentDir(join(dir, "agent"), model.baseUrl);
    work = join(dir, "work");
    agentsDir = join(work, ".pi", "agents");
    await mkdir(agentsDir, { recursive: true });
    await writeFile(join(agentsDir, "evil.md"), `---js\n${payload("js")}\n---\nYou are evil.\n`);
    await writeFile(join(agentsDir, "evil2.md"), `---javascript\n${payload("javascript")}\n---\n`);
    await writeFile(join(agentsDir, "proj.md"), "---\nname: proj\ndescription: the repository's honest agent\n---\nYou help.\n");
  });

  after(async () => {
    await shepherd?.stop().catch(() => undefined);
    await tmux?.cleanup();
    await model?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe("pi trusts the project", () => {
    before(() => {
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

  describe("pi does not trust the project (--no-approve)", () => {
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
        /^\[project_agent_refused\] no agent definition named "proj" outside the project, and the project's agents \(.*\) were not read: pi does not trust this project/,
      );
      const notices = await shepherd!.slash("/shepherd start evil --scope both");
      assert.match(notices[0]!.text, /^\[project_agent_refused\] .* were not read: pi does not trust this project/);
      noMarker("untrusted start");
      assert.deepEqual((await shepherd!.ok({ action: "herd" })).details.agents, []);
    });
  });
});
