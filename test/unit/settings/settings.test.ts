import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, it } from "node:test";
import { DEFAULT_SETTINGS, loadSettings, SETTING_KEYS, UNTRUSTED_HINT, USER_ONLY } from "../../../src/settings.ts";
import { resolveModel, withModelAlias } from "../../../src/context/models.ts";

/** The person trusted the project (pi-shepherd's own rule, src/project-trust.ts). */
const trusted = { projectTrusted: true };

describe("settings", () => {
  let root: string | undefined;
  let agentDir: string;
  let cwd: string;
  let userFile: string;
  let projectFile: string;

  beforeEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-settings-"));
    agentDir = join(root, "agent");
    cwd = join(root, "repo");
    userFile = join(agentDir, "pi-shepherd", "settings.json");
    projectFile = join(cwd, ".pi", "shepherd.json");
    await mkdir(join(agentDir, "pi-shepherd"), { recursive: true });
    await mkdir(join(cwd, ".pi"), { recursive: true });
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("without files: the defaults, no problems, and where the files would be", async () => {
    const l = await loadSettings(agentDir, cwd);
    assert.deepEqual(l.settings, DEFAULT_SETTINGS);
    assert.deepEqual(l.problems, []);
    assert.deepEqual(l.files, []);
    assert.deepEqual(l.paths, { user: userFile, project: projectFile });
    assert.ok(SETTING_KEYS.every((k) => l.origins[k] === "default"));
    assert.equal(DEFAULT_SETTINGS.waitTimeout, 1200);
    assert.equal(DEFAULT_SETTINGS.agentScope, "user");
    assert.equal(DEFAULT_SETTINGS.maxDepth, 0, "sheep cannot start sheep by default");
  });

  it("a trusted project's file overrides the user file for the keys it may set, and each value knows its origin", async () => {
    await writeFile(
      userFile,
      JSON.stringify({ placement: "pane", direction: "down", waitTimeout: 30, piCommand: ["/usr/bin/pi"], maxDepth: 1, maxParallel: 2 }),
    );
    await writeFile(projectFile, JSON.stringify({ placement: "workspace", runtime: "tmux" }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual(l.problems, []);
    assert.deepEqual(l.files, [userFile, projectFile]);
    assert.equal(l.settings.placement, "workspace");
    assert.equal(l.origins.placement, "project");
    assert.equal(l.settings.direction, "down");
    assert.equal(l.origins.direction, "user");
    assert.equal(l.settings.waitTimeout, 30);
    assert.deepEqual(l.settings.piCommand, ["/usr/bin/pi"]);
    assert.equal(l.settings.maxDepth, 1);
    assert.equal(l.settings.maxParallel, 2);
    assert.equal(l.settings.runtime, "tmux");
    assert.equal(l.origins.maxTasks, "default");
  });

  it("reports unknown keys and bad values with their file, and keeps the value before them", async () => {
    await writeFile(userFile, JSON.stringify({ placement: "pane", waitTimout: 5, startTimeout: -1, closeOnExit: "yes" }));
    await writeFile(projectFile, JSON.stringify({ placement: "sideways", runtime: "screen", direction: 2.5, piCommand: [] }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.equal(l.settings.placement, "pane", "the project's bad value keeps the user's");
    assert.equal(l.settings.startTimeout, DEFAULT_SETTINGS.startTimeout);
    assert.equal(l.settings.closeOnExit, true);
    assert.equal(l.settings.runtime, "auto");
    assert.equal(l.settings.maxTasks, 8);
    const expect = [
      `${userFile}: unknown key "waitTimout"`,
      `${userFile}: "startTimeout" must be a whole number of seconds above 0; kept 60`,
      `${userFile}: "closeOnExit" must be true or false; kept true`,
      `${projectFile}: "placement" must be "tab", "pane" or "workspace"; kept "pane"`,
      `${projectFile}: "runtime" must be "auto", "herdr" or "tmux"; kept "auto"`,
      `${projectFile}: "direction" must be "right" or "down"; kept "right"`,
      `${projectFile}: "piCommand" can only be set in the user's settings`,
    ];
    assert.equal(l.problems.length, expect.length, l.problems.join("\n"));
    for (const e of expect)
      assert.ok(
        l.problems.some((p) => p.startsWith(e)),
        `reported: ${e}\n${l.problems.join("\n")}`,
      );
  });

  it("a file that is not a JSON object is reported and the other file still applies", async () => {
    await writeFile(userFile, "{ placement: pane");
    await writeFile(projectFile, JSON.stringify({ direction: "down" }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.equal(l.problems.length, 1);
    assert.match(l.problems[0]!, new RegExp(`^${userFile.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: is not valid JSON`));
    assert.deepEqual(l.files, [projectFile]);
    assert.equal(l.settings.direction, "down");
    await writeFile(userFile, "[1, 2]");
    const arr = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual(arr.problems, [`${userFile}: must hold a JSON object`]);
  });

  it("an untrusted project's file is left out, and says so with the keys it would have set; without a decision it is untrusted", async () => {
    await writeFile(userFile, JSON.stringify({ placement: "pane" }));
    await writeFile(projectFile, JSON.stringify({ placement: "workspace", direction: "down", bogus: 1 }));
    const left = [`${projectFile}: not applied (it sets placement, direction), because pi-shepherd does not trust this project (${UNTRUSTED_HINT})`];
    for (const opts of [{ projectTrusted: false }, {}]) {
      const untrusted = await loadSettings(agentDir, cwd, opts);
      assert.equal(untrusted.settings.placement, "pane", JSON.stringify(opts));
      assert.equal(untrusted.origins.direction, "default");
      assert.deepEqual(untrusted.files, [userFile]);
      assert.deepEqual(untrusted.problems, left, JSON.stringify(opts));
    }
    const t = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual([t.settings.placement, t.settings.direction], ["workspace", "down"]);
  });

  it("keys a repository must not control are user-only", async () => {
    await writeFile(projectFile, JSON.stringify({ allowProjectAgentsWithoutUI: true, confirmProjectAgents: false, maxDepth: 3, piCommand: ["evil"] }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.equal(l.settings.allowProjectAgentsWithoutUI, false);
    assert.equal(l.settings.confirmProjectAgents, true);
    assert.equal(l.settings.maxDepth, 0);
    assert.equal(l.settings.piCommand, undefined);
    assert.equal(l.problems.length, 4);
    assert.ok(l.problems.every((p) => p.startsWith(`${projectFile}: `) && p.includes("can only be set in the user's settings")));
    await writeFile(userFile, JSON.stringify({ allowProjectAgentsWithoutUI: true, confirmProjectAgents: false }));
    const u = await loadSettings(agentDir, cwd);
    assert.equal(u.settings.allowProjectAgentsWithoutUI, true, "the user may set them");
    assert.equal(u.settings.confirmProjectAgents, false);
  });

  it("every key is decided: a project's file may set only runtime, placement and direction", () => {
    assert.deepEqual(
      SETTING_KEYS.filter((k) => !USER_ONLY.has(k)),
      ["runtime", "placement", "direction"],
    );
  });

  it("the keys that widen what runs are user-only: a trusted project's values are ignored, each reported by name", async () => {
    // The .pi/shepherd.json of issue 21, item 7: a repository that asked for all of it.
    const week = 7 * 24 * 3600;
    const widening = {
      agentScope: "both",
      evidence: false,
      closeOnExit: false,
      maxTasks: 1000,
      maxParallel: 64,
      waitTimeout: week,
      startTimeout: week,
      diffInlineLines: 0,
    };
    await writeFile(projectFile, JSON.stringify(widening));
    for (const opts of [trusted, { projectTrusted: false }, {}]) {
      const l = await loadSettings(agentDir, cwd, opts);
      assert.deepEqual(l.settings, DEFAULT_SETTINGS, JSON.stringify(opts));
      assert.ok(SETTING_KEYS.every((k) => l.origins[k] === "default"));
    }
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual(
      l.problems,
      Object.keys(widening).map((k) => `${projectFile}: "${k}" can only be set in the user's settings (${userFile}); ignored here`),
    );
    await writeFile(userFile, JSON.stringify(widening));
    const mine = await loadSettings(agentDir, cwd, trusted);
    assert.equal(mine.settings.maxParallel, 64, "the user may set them");
    assert.equal(mine.origins.agentScope, "user");
  });

  it("model aliases come from the user's file only; a project's aliases are ignored and reported", async () => {
    await writeFile(userFile, JSON.stringify({ models: { fast: "anthropic/claude-haiku-4-5", deep: "anthropic/claude-opus-4-5:high" } }));
    await writeFile(projectFile, JSON.stringify({ models: { fast: "evil/exfiltrator" } }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual(l.settings.models, { fast: "anthropic/claude-haiku-4-5", deep: "anthropic/claude-opus-4-5:high" });
    assert.equal(l.origins.models, "user");
    assert.deepEqual(l.problems, [`${projectFile}: "models" can only be set in the user's settings (${userFile}); ignored here`]);
    const { models } = l.settings;
    assert.equal(resolveModel("fast", models), "anthropic/claude-haiku-4-5");
    assert.equal(resolveModel("deep", models), "anthropic/claude-opus-4-5:high");
    assert.equal(resolveModel("fast:low", models), "anthropic/claude-haiku-4-5:low", "pi's thinking suffix is kept");
    assert.equal(resolveModel("deep:low", models), "deep:low", "an alias that names a level takes no second one");
    assert.equal(resolveModel("openai/gpt-5", models), "openai/gpt-5", "an unknown name goes to pi unchanged");
    assert.equal(resolveModel("constructor", models), "constructor", "only the user's own keys are aliases");
    const def = { name: "scout", description: "d", source: "user" as const, path: "/a/scout.md", model: "fast" };
    assert.equal(withModelAlias(def, models).model, "anthropic/claude-haiku-4-5");
  });

  it("a bad alias map is reported and none of it is used", async () => {
    for (const bad of [{ fast: "-x" }, { fast: "" }, { "a b": "m" }, { "fast:high": "m" }, ["fast"], { fast: 3 }]) {
      await writeFile(userFile, JSON.stringify({ models: bad }));
      const l = await loadSettings(agentDir, cwd);
      assert.deepEqual(l.settings.models, {}, JSON.stringify(bad));
      assert.equal(l.problems.length, 1);
      assert.match(l.problems[0]!, /"models" must be an object of alias -> model/);
    }
  });

  it("warm pool sizes come from the user's file only: a repository cannot make the machine boot sheep", async () => {
    await writeFile(userFile, JSON.stringify({ warm: { scout: 1, worker: 2 } }));
    await writeFile(projectFile, JSON.stringify({ warm: { worker: 8 } }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual(l.settings.warm, { scout: 1, worker: 2 });
    assert.deepEqual(l.problems, [`${projectFile}: "warm" can only be set in the user's settings (${userFile}); ignored here`]);
    for (const bad of [{ worker: -1 }, { worker: 9 }, { worker: 1.5 }, { "-x": 1 }, [1], { worker: "2" }]) {
      await writeFile(userFile, JSON.stringify({ warm: bad }));
      await writeFile(projectFile, "{}");
      const b = await loadSettings(agentDir, cwd);
      assert.deepEqual(b.settings.warm, {}, JSON.stringify(bad));
      assert.match(b.problems[0]!, /"warm" must be an object of agent name -> ready sheep to keep, 0-8/);
    }
  });

  it("the panel is the user's own: autostart and port from the user's file only, one key keeping the other's default", async () => {
    assert.deepEqual(DEFAULT_SETTINGS.panel, { autostart: false });
    assert.ok(USER_ONLY.has("panel"));
    await writeFile(userFile, JSON.stringify({ panel: { autostart: true } }));
    await writeFile(projectFile, JSON.stringify({ panel: { autostart: true, port: 80 } }));
    const l = await loadSettings(agentDir, cwd, trusted);
    assert.deepEqual(l.settings.panel, { autostart: true });
    assert.deepEqual(l.problems, [`${projectFile}: "panel" can only be set in the user's settings (${userFile}); ignored here`]);
    await writeFile(userFile, JSON.stringify({ panel: { port: 8765 } }));
    await writeFile(projectFile, "{}");
    assert.deepEqual((await loadSettings(agentDir, cwd)).settings.panel, { autostart: false, port: 8765 });
    for (const bad of [{ port: -1 }, { port: 65536 }, { port: 1.5 }, { port: "8080" }, { autostart: "yes" }, { host: "0.0.0.0" }, [], true]) {
      await writeFile(userFile, JSON.stringify({ panel: bad }));
      const b = await loadSettings(agentDir, cwd);
      assert.deepEqual(b.settings.panel, DEFAULT_SETTINGS.panel, JSON.stringify(bad));
      assert.match(b.problems[0]!, /"panel" must be an object \{"autostart": true or false, "port": 0-65535\}/);
    }
  });
});
