import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import matter from "gray-matter";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerShepherdCommand } from "../../../extensions/shepherd-command.ts";
import { discoverAgents, projectWalk, UNTRUSTED, type AgentScope } from "../../../src/definitions/discover.ts";
import { yamlOnlyEngines } from "../../../src/definitions/frontmatter.ts";
import { parseAgentFile } from "../../../src/definitions/parse.ts";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { recordTrustDecision } from "../../../src/project-trust.ts";
import { DEFAULT_SETTINGS } from "../../../src/settings.ts";
import { dispatch } from "../../../src/edge/dispatch.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { repoRoot } from "../../support/rpc-shepherd.ts";

const agentFile = (name: string, description: string, extra = "", body = "") => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;

async function put(path: string, text: string) {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

describe("agent discovery on fixture trees", () => {
  let root: string;
  let agentDir: string;
  let home: string;
  let bundledDir: string;
  let project: string;

  const find = (scope: AgentScope, cwd = project) => discoverAgents({ cwd, scope, agentDir, bundledDir, home, projectTrusted: true });
  const byName = (d: Awaited<ReturnType<typeof find>>) => new Map(d.agents.map((a) => [a.name, a]));

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-discovery-"));
    agentDir = join(root, "agent");
    home = join(root, "home");
    bundledDir = join(root, "bundled");
    project = join(root, "repo");
    await put(join(agentDir, "agents", "scout.md"), agentFile("scout", "the user's scout"));
    await put(join(agentDir, "agents", "shared.md"), agentFile("shared", "from agentDir"));
    await put(join(home, ".agents", "agents", "shared.md"), agentFile("shared", "from ~/.agents"));
    await put(join(home, ".agents", "agents", "homeonly.md"), agentFile("homeonly", "only in ~/.agents"));
    await mkdir(join(project, ".git"), { recursive: true });
    await put(join(project, ".pi", "agents", "scout.md"), agentFile("scout", "the project's scout"));
    await put(join(project, ".pi", "agents", "planner.md"), agentFile("planner", "the project's planner", "tools: read, grep\n", "Plan it.\n"));
    await put(join(project, ".agents", "agents", "planner.md"), agentFile("planner", "loses to .pi/agents"));
    await put(join(project, ".agents", "agents", "dotagents.md"), agentFile("dotagents", "from .agents/agents"));
    await put(join(bundledDir, "scout.md"), agentFile("scout", "bundled scout"));
    await put(join(bundledDir, "planner.md"), agentFile("planner", "bundled planner"));
    await put(join(bundledDir, "worker.md"), agentFile("worker", "bundled worker"));
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("the first definition of a name wins, user then bundled; a project's definition never takes their names: it is project:<name>", async () => {
    const found = await find("both");
    const all = byName(found);
    assert.equal(all.get("scout")?.description, "the user's scout");
    assert.equal(all.get("scout")?.source, "user");
    assert.equal(all.get("project:scout")?.description, "the project's scout", "the user's scout keeps its name");
    assert.equal(all.get("planner")?.description, "bundled planner", "the bundled planner keeps its name");
    assert.equal(all.get("planner")?.source, "bundled");
    assert.equal(all.get("project:planner")?.description, "the project's planner");
    assert.equal(all.get("project:planner")?.source, "project");
    assert.equal(all.get("project:planner")?.path, join(project, ".pi", "agents", "planner.md"));
    assert.equal(all.get("worker")?.source, "bundled");
    const rank = found.agents.map((a) => ["user", "project", "bundled"].indexOf(a.source));
    assert.deepEqual(rank, [...rank].sort(), "listed user, project, bundled");
    assert.equal(all.get("shared")?.description, "from agentDir", "<agentDir>/agents comes before ~/.agents/agents");
    assert.equal(all.get("homeonly")?.source, "user");
    assert.equal(all.get("dotagents")?.source, "project", "the same ancestor's .agents/agents is read after its .pi/agents; a name nobody else has is kept");
  });

  it("each scope reads only its own directories, and bundled agents are always there", async () => {
    const user = byName(await find("user"));
    assert.deepEqual([...user.keys()].sort(), ["homeonly", "planner", "scout", "shared", "worker"]);
    assert.equal(user.get("planner")?.source, "bundled");
    const proj = await find("project");
    assert.deepEqual(
      new Set(proj.agents.map((a) => `${a.name}:${a.source}`)),
      new Set(["project:scout:project", "project:planner:project", "dotagents:project", "scout:bundled", "planner:bundled", "worker:bundled"]),
      "a project definition has one name in every scope: the user's scout is not listed, but still keeps the name",
    );
    assert.deepEqual(proj.projectDirs, [join(project, ".pi", "agents"), join(project, ".agents", "agents")]);
  });

  it("uses only the nearest ancestor that has project agents", async () => {
    const sub = join(project, "packages", "app");
    const deep = join(sub, "src", "deep");
    await mkdir(deep, { recursive: true });
    await put(join(sub, ".agents", "agents", "appagent.md"), agentFile("appagent", "the sub-project's"));
    try {
      const d = await find("project", deep);
      assert.deepEqual(d.projectDirs, [join(sub, ".agents", "agents")]);
      assert.deepEqual(
        d.agents.filter((a) => a.source === "project").map((a) => a.name),
        ["appagent"],
        "the parent repo's agents do not mix in",
      );
      const fromRoot = await find("project", join(project, "packages"));
      assert.deepEqual(fromRoot.projectDirs, [join(project, ".pi", "agents"), join(project, ".agents", "agents")], "walks up past directories without agents");
    } finally {
      await rm(join(sub, ".agents"), { recursive: true, force: true });
    }
  });

  it("never takes ~/.agents/agents for a project's directory", async () => {
    const inHome = join(home, "code", "thing");
    await mkdir(inHome, { recursive: true });
    const d = await find("project", inHome);
    assert.deepEqual(d.projectDirs, []);
    assert.ok(!d.agents.some((a) => a.source === "project"));
  });

  it("reads files fresh on every call", async () => {
    const path = join(agentDir, "agents", "fresh.md");
    await put(path, agentFile("fresh", "first version"));
    assert.equal(byName(await find("user")).get("fresh")?.description, "first version");
    await put(path, agentFile("fresh", "second version"));
    assert.equal(byName(await find("user")).get("fresh")?.description, "second version");
    await rm(path);
    assert.equal(byName(await find("user")).has("fresh"), false);
  });

  it("reports every malformed file with its reason and keeps the good ones", async () => {
    const dir = join(root, "malformed");
    const cases: [string, string, RegExp][] = [
      ["no-name.md", "---\ndescription: nameless\n---\n", /missing required field "name"/],
      ["no-description.md", "---\nname: nodesc\n---\n", /missing required field "description"/],
      ["number-name.md", "---\nname: 42\ndescription: d\n---\n", /"name" must be a non-empty string/],
      ["no-frontmatter.md", "just text\n", /missing required field "name"/],
      ["bad-yaml.md", "---\nname: [unclosed\ndescription: d\n---\n", /frontmatter is not valid YAML/],
      ["slash.md", agentFile("a/b", "d"), /name "a\/b" is not valid/],
      ["dotdot.md", agentFile("x..y", "d"), /name "x\.\.y" is not valid/],
      ["tools-map.md", agentFile("toolsmap", "d", "tools:\n  read: true\n"), /"tools" must be a comma-separated string or a list/],
      ["tools-dash.md", agentFile("toolsdash", "d", "tools: read, --evil\n"), /tool name "--evil" is not valid/],
      ["model-dash.md", agentFile("modeldash", "d", "model: --provider\n"), /"model" must be a non-empty string not starting with "-"/],
      ["thinking.md", agentFile("thinker", "d", "thinking: enormous\n"), /"thinking" must be one of/],
      ["isolation.md", agentFile("isolator", "d", "isolation: sandbox\n"), /"isolation" must be "worktree" or "none"/],
      ["twin-b.md", agentFile("good", "the same name again"), /name "good" is already defined in .*twin-a\.md/],
      ["twin-a.md", agentFile("good", "the first of two"), /unused/],
    ];
    for (const [file, text] of cases) await put(join(dir, file), text);
    const d = await discoverAgents({ cwd: root, scope: "user", agentDir: join(root, "nothing"), bundledDir: dir, home: join(root, "nohome") });
    assert.deepEqual(
      d.agents.map((a) => [a.name, a.description]),
      [["good", "the first of two"]],
    );
    for (const [file, , reason] of cases.slice(0, -1)) {
      const s = d.skipped.find((x) => x.path === join(dir, file));
      assert.ok(s, `${file} is reported`);
      assert.match(s.reason, reason, file);
    }
    assert.equal(d.skipped.length, cases.length - 1);
    // The same broken file read again gives the same reason (no parser cache hides it).
    const again = await discoverAgents({ cwd: root, scope: "user", agentDir: join(root, "nothing"), bundledDir: dir, home: join(root, "nohome") });
    assert.deepEqual(again.skipped, d.skipped);
  });

  it("accepts tools as a comma string or a YAML list, and keeps model, thinking and the body", () => {
    const s = parseAgentFile(
      agentFile("s", "d", "tools: read, grep ,ls\nmodel: scripted/scripted-model\nthinking: low\n", "\nBe brief.\n\n"),
      "/x/s.md",
      "user",
    );
    assert.ok(s.ok);
    assert.deepEqual(s.definition, {
      name: "s",
      description: "d",
      source: "user",
      path: "/x/s.md",
      tools: ["read", "grep", "ls"],
      model: "scripted/scripted-model",
      thinking: "low",
      systemPrompt: "Be brief.",
    });
    const l = parseAgentFile(agentFile("l", "d", "tools:\n  - read\n  - bash\n"), "/x/l.md", "project");
    assert.ok(l.ok);
    assert.deepEqual(l.definition.tools, ["read", "bash"]);
    const none = parseAgentFile(agentFile("n", "d", 'tools: ""\n'), "/x/n.md", "user");
    assert.ok(none.ok);
    assert.equal(none.definition.tools, undefined, "an empty list means pi's default tools");
    assert.equal(none.definition.systemPrompt, undefined);
    assert.equal(none.definition.isolation, undefined);
    const iso = parseAgentFile(agentFile("i", "d", "isolation: worktree\n"), "/x/i.md", "user");
    assert.ok(iso.ok);
    assert.equal(iso.definition.isolation, "worktree", "isolation: worktree gives its sheep a worktree of its own");
    const shared = parseAgentFile(agentFile("i", "d", "isolation: none\n"), "/x/i.md", "user");
    assert.ok(shared.ok);
    assert.equal(shared.definition.isolation, undefined);
  });

  it("lists the bundled agents, each with a tool list that fits its role", async () => {
    const d = await discoverAgents({
      cwd: root,
      scope: "user",
      agentDir: join(root, "nothing"),
      bundledDir: join(repoRoot, "agents"),
      home: join(root, "nohome"),
    });
    assert.deepEqual(d.skipped, []);
    const m = new Map(d.agents.map((a) => [a.name, a]));
    assert.deepEqual([...m.keys()].sort(), ["planner", "reviewer", "scout", "worker"]);
    for (const a of m.values()) {
      assert.equal(a.source, "bundled");
      assert.ok(a.systemPrompt && a.systemPrompt.length > 50, `${a.name} has a body`);
    }
    const writes = ["edit", "write"];
    for (const readOnly of ["scout", "planner"]) {
      const tools = m.get(readOnly)!.tools!;
      assert.ok(tools.includes("read"), `${readOnly} can read`);
      assert.ok(!tools.some((t) => [...writes, "bash"].includes(t)), `${readOnly} cannot change anything`);
    }
    assert.ok(m.get("reviewer")!.tools!.includes("bash"), "the reviewer can run tests");
    assert.ok(!m.get("reviewer")!.tools!.some((t) => writes.includes(t)), "the reviewer does not edit");
    assert.equal(m.get("worker")!.tools, undefined, "the worker has pi's full default tool set");
  });
});

describe("only YAML front matter is ever parsed", () => {
  let root: string;
  let marker: string;
  const G = globalThis as Record<string, unknown>;
  const engines = (matter as unknown as { engines: Record<string, unknown> }).engines;
  const cache = (matter as unknown as { cache: Record<string, unknown> }).cache;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-frontmatter-"));
    marker = join(root, "payload-ran");
  });

  afterEach(() => {
    delete G.__shepherdPayload;
    delete engines.coffee;
    delete engines.toml;
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Code that, were it evaluated, would leave a file and a global behind. */
  const payload = () =>
    `{ name: (globalThis.__shepherdPayload = "ran", require("fs").writeFileSync(${JSON.stringify(marker)}, "ran"), "evil"), description: "d" }`;
  /** An engine as another module in the process could register it: running it is the harm. */
  const engine = () => (text: string) => {
    G.__shepherdPayload = "ran";
    writeFileSync(marker, text);
    return { name: "evil", description: "d" };
  };

  it("skips js, javascript, coffee, json, toml and every other language with a reason; no payload runs", async () => {
    engines.coffee = engine();
    engines.toml = engine();
    const dir = join(root, "agents");
    const cases: [string, string, string][] = [
      ["js.md", `---js\n${payload()}\n---\nbody\n`, "js"],
      ["javascript.md", `---javascript\n${payload()}\n---\nbody\n`, "javascript"],
      ["upper.md", `---JS\n${payload()}\n---\n`, "JS"],
      ["spaced.md", `--- js  \n${payload()}\n---\n`, "js"],
      ["bom.md", `\uFEFF---js\n${payload()}\n---\n`, "js"],
      ["crlf.md", `---js\r\n${payload()}\r\n---\r\n`, "js"],
      ["coffee.md", "---coffee\nname: 'evil'\n---\n", "coffee"],
      ["toml.md", '---toml\nname = "evil"\n---\n', "toml"],
      ["json.md", '---json\n{"name": "j", "description": "d"}\n---\n', "json"],
      ["yml.md", "---yml\nname: y\ndescription: d\n---\n", "yml"],
    ];
    for (const [file, text] of cases) await put(join(dir, file), text);
    await put(join(dir, "yaml.md"), "---yaml\nname: named\ndescription: says yaml\n---\n");
    await put(join(dir, "plain.md"), "---\r\nname: plain\r\ndescription: no language\r\n---\r\nBody.\r\n");
    const d = await discoverAgents({ cwd: root, scope: "user", agentDir: join(root, "nothing"), bundledDir: dir, home: join(root, "nohome") });
    assert.equal(existsSync(marker), false, "no payload wrote its file");
    assert.equal(G.__shepherdPayload, undefined, "no payload set its global");
    assert.deepEqual(d.agents.map((a) => a.name).sort(), ["named", "plain"]);
    for (const [file, , language] of cases) {
      const s = d.skipped.find((x) => x.path === join(dir, file));
      assert.ok(s, `${file} is reported`);
      assert.equal(s.reason, `front matter language "${language}" is not allowed: only YAML front matter is read, and this file was not evaluated`, file);
    }
    assert.equal(d.skipped.length, cases.length);
  });

  it("the engine table handed to gray-matter refuses every language but YAML by itself", () => {
    engines.coffee = engine();
    for (const language of ["js", "javascript", "JS", "coffee", "json"]) {
      assert.throws(
        () => matter(`---\n${payload()}\n---\n`, { language, engines: yamlOnlyEngines() }),
        /is not allowed: only YAML front matter is read/,
        language,
      );
    }
    assert.equal(existsSync(marker), false);
    assert.equal(G.__shepherdPayload, undefined);
    assert.deepEqual(matter("---\nname: y\n---\n", { language: "yaml", engines: yamlOnlyEngines() }).data, { name: "y" });
  });

  it("a file with no newline after its opening line is read the same way", () => {
    const r = parseAgentFile("---js", "/x/one-line.md", "project");
    assert.deepEqual(r, { ok: false, reason: 'front matter language "js" is not allowed: only YAML front matter is read, and this file was not evaluated' });
  });

  it("never answers from gray-matter's process-wide cache", () => {
    const text = agentFile("real", "what the file says");
    const hostile = `---js\n${payload()}\n---\n`;
    cache[text] = { data: { name: "cached", description: "planted in the cache" }, content: "" };
    cache[hostile] = { data: { name: "evil", description: "planted in the cache" }, content: "" };
    try {
      const r = parseAgentFile(text, "/x/real.md", "project");
      assert.ok(r.ok);
      assert.equal(r.definition.name, "real");
      assert.equal(parseAgentFile(hostile, "/x/evil.md", "project").ok, false);
    } finally {
      delete cache[text];
      delete cache[hostile];
    }
    assert.equal(G.__shepherdPayload, undefined);
  });
});

describe("the project walk ends at the repository root or at home", () => {
  let root: string;
  let home: string;
  const noUser = (cwd: string, h = home) =>
    discoverAgents({ cwd, scope: "project", agentDir: join(root, "agent"), bundledDir: join(root, "none"), home: h, projectTrusted: true });

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-walk-"));
    home = join(root, "home");
    await put(join(root, ".pi", "agents", "above.md"), agentFile("above", "above home and every repo"));
    await put(join(home, ".pi", "agents", "homeproj.md"), agentFile("homeproj", "in home itself"));
    await put(join(home, "outer", ".pi", "agents", "outer.md"), agentFile("outer", "above the repository"));
    await mkdir(join(home, "outer", "repo", ".git"), { recursive: true });
    await mkdir(join(home, "outer", "repo", "src", "deep"), { recursive: true });
    await put(join(home, "outer", "wt", ".git"), "gitdir: /elsewhere/.git/worktrees/wt\n");
    await mkdir(join(home, "outer", "wt", "a"), { recursive: true });
    await mkdir(join(home, "code", "thing"), { recursive: true });
    await mkdir(join(root, "home2", "x"), { recursive: true });
    await put(join(root, "stranger", ".pi", "agents", "stranger.md"), agentFile("stranger", "a stranger's, like /tmp/.pi/agents"));
    await mkdir(join(root, "stranger", "x", "y"), { recursive: true });
    await put(join(root, "shared", ".pi", "agents", "shared.md"), agentFile("shared", "beside a .git"));
    await mkdir(join(root, "shared", ".git"), { recursive: true });
    await mkdir(join(root, "shared", "x", "y"), { recursive: true });
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("stops at the repository root (a .git directory or file), even with agents above it", async () => {
    const repo = join(home, "outer", "repo");
    const deep = join(repo, "src", "deep");
    assert.deepEqual(projectWalk(deep, home), [deep, join(repo, "src"), repo]);
    assert.deepEqual((await noUser(deep)).projectDirs, [], "the agents above the repository are not its");
    const wt = join(home, "outer", "wt");
    assert.deepEqual(projectWalk(join(wt, "a"), home), [join(wt, "a"), wt]);
    assert.deepEqual((await noUser(join(wt, "a"))).projectDirs, []);
  });

  it("with no repository under home, walks up to home, home included, and never above it", async () => {
    const thing = join(home, "code", "thing");
    assert.deepEqual(projectWalk(thing, home), [thing, join(home, "code"), home]);
    const d = await noUser(thing);
    assert.deepEqual(d.projectDirs, [join(home, ".pi", "agents")]);
    assert.deepEqual(
      d.agents.filter((a) => a.source === "project").map((a) => a.name),
      ["homeproj"],
    );
    const home2 = join(root, "home2");
    assert.deepEqual((await noUser(join(home2, "x"), home2)).projectDirs, [], `${join(root, ".pi", "agents")} is above home`);
  });

  it("outside home and any repository, only cwd itself: a stranger's directory above is never a project", async () => {
    const y = join(root, "stranger", "x", "y");
    assert.deepEqual(projectWalk(y, home), [y]);
    const d = await noUser(y);
    assert.deepEqual(d.projectDirs, []);
    assert.ok(!d.agents.some((a) => a.name === "stranger"));
    assert.deepEqual((await noUser(join(root, "stranger"))).projectDirs, [join(root, "stranger", ".pi", "agents")], "cwd itself is always looked at");
  });

  it("a .git that is not the user's own makes no repository root", () => {
    const y = join(root, "shared", "x", "y");
    const me = process.getuid?.();
    assert.notEqual(me, undefined, "this platform has uids");
    assert.deepEqual(projectWalk(y, home, me), [y, join(root, "shared", "x"), join(root, "shared")], "the user's own .git counts");
    assert.deepEqual(projectWalk(y, home, me! + 1), [y], "someone else's .git does not widen the walk");
  });

  it("a home of / bounds nothing", () => {
    const y = join(root, "stranger", "x", "y");
    assert.deepEqual(projectWalk(y, "/"), [y]);
  });
});

describe("an untrusted project's agent directories are never read", () => {
  let root: string;
  let repo: string;
  let agentDir: string;
  const bundledDir = () => join(root, "bundled");

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-untrusted-"));
    repo = join(root, "repo");
    agentDir = join(root, "agent");
    await mkdir(join(repo, ".git"), { recursive: true });
    await put(join(repo, ".pi", "agents", "helper.md"), agentFile("helper", "the repo's helper"));
    await put(join(repo, ".pi", "agents", "broken.md"), "---\nname: broken\n---\n");
    await put(join(repo, ".agents", "agents", "other.md"), agentFile("other", "the repo's other"));
    await put(join(bundledDir(), "worker.md"), agentFile("worker", "bundled worker"));
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const find = (projectTrusted?: boolean) =>
    discoverAgents({
      cwd: repo,
      scope: "both",
      agentDir,
      bundledDir: bundledDir(),
      home: join(root, "nohome"),
      ...(projectTrusted === undefined ? {} : { projectTrusted }),
    });
  const unread = () => [
    { path: join(repo, ".pi", "agents"), reason: UNTRUSTED },
    { path: join(repo, ".agents", "agents"), reason: UNTRUSTED },
  ];

  it("names the directories it left out instead of reading them; no trust decision is untrusted", async () => {
    for (const untrusted of [false, undefined]) {
      const d = await find(untrusted);
      assert.deepEqual(
        d.agents.map((a) => a.name),
        ["worker"],
        `projectTrusted ${untrusted}`,
      );
      assert.deepEqual(d.skipped, unread(), "the broken file is not reported: it was never parsed");
      assert.deepEqual(d.projectDirs, []);
    }
    const t = await find(true);
    assert.deepEqual(t.agents.map((a) => a.name).sort(), ["helper", "other", "worker"]);
    assert.match(t.skipped.map((s) => s.reason).join("\n"), /missing required field "description"/);
  });

  it("sheep, start and delegate with an untrusted project read nothing of it and say why", async () => {
    const world = new MemoryWorld();
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s", clock: new FakeClock() });
    const ctx = {
      shepherd,
      settings: { ...DEFAULT_SETTINGS, agentScope: "project" as const },
      cwd: repo,
      agentDir,
      bundledDir: bundledDir(),
      trust: { hasUI: true, confirm: async () => true, isProjectTrusted: () => false },
    };
    const listed = await dispatch({ action: "sheep", agentScope: "both" }, ctx);
    assert.deepEqual(listed.details.skipped, unread());
    assert.deepEqual(
      (listed.details.agents as { name: string }[]).map((a) => a.name),
      ["worker"],
    );
    assert.ok(listed.content[0]!.text.includes(`${join(repo, ".pi", "agents")}: ${UNTRUSTED}`), listed.content[0]!.text);
    const refused =
      /^ShepherdError: \[project_agent_refused\] no agent definition named "helper" outside the project, and the project's agents \(.*\) were not read: pi-shepherd does not trust this project \(\/shepherd trust/;
    await assert.rejects(dispatch({ action: "start", agent: "helper" }, ctx), refused);
    await assert.rejects(dispatch({ action: "delegate", agent: "helper", task: "t" }, ctx), refused);
    assert.deepEqual(world.calls, [], "nothing was started");
    const trusted = await dispatch({ action: "sheep", agentScope: "project" }, { ...ctx, trust: { ...ctx.trust, isProjectTrusted: () => true } });
    assert.ok(
      (trusted.details.agents as { name: string }[]).some((a) => a.name === "helper"),
      "a trusted project's agents are listed",
    );
  });
});

describe("/shepherd completions read a project's agents only when pi-shepherd trusts it", () => {
  let root: string;
  let repo: string;
  let marker: string;
  let agentDir: string;
  const previousAgentDir = process.env.PI_CODING_AGENT_DIR;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "pi-shepherd-complete-"));
    repo = join(root, "repo");
    marker = join(root, "payload-ran");
    agentDir = join(root, "agent");
    await put(join(agentDir, "pi-shepherd", "settings.json"), JSON.stringify({ agentScope: "both" }));
    await put(join(repo, ".pi", "agents", "proj.md"), agentFile("proj", "the repo's agent"));
    await put(
      join(repo, ".pi", "agents", "evil.md"),
      `---js\n{ name: (require("fs").writeFileSync(${JSON.stringify(marker)}, "ran"), "evil"), description: "d" }\n---\n`,
    );
    process.env.PI_CODING_AGENT_DIR = agentDir;
  });

  after(async () => {
    if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("nothing before the session starts, nothing without a decision (whatever pi says), the agents once the person trusted the project, nothing when pi refuses it", async () => {
    const handlers = new Map<string, (event: unknown, ctx: unknown) => Promise<void>>();
    let complete: ((prefix: string) => Promise<{ label: string }[] | null>) | undefined;
    const pi = {
      on: (event: string, handler: (event: unknown, ctx: unknown) => Promise<void>) => handlers.set(event, handler),
      registerCommand: (_name: string, o: { getArgumentCompletions: (prefix: string) => Promise<{ label: string }[] | null> }) => {
        complete = o.getArgumentCompletions;
      },
    };
    // Before session_start the command only knows the process's cwd: make that the project.
    const cwd = process.cwd();
    process.chdir(repo);
    try {
      registerShepherdCommand(pi as unknown as ExtensionAPI, {
        appFor: () => Promise.reject(new Error("no app in this test")),
        current: () => undefined,
        entry: () => {
          throw new Error("no entry in this test");
        },
      });
    } finally {
      process.chdir(cwd);
    }
    const names = async () => ((await complete!("start ")) ?? []).map((i) => i.label);
    const session = (trusted?: boolean) =>
      handlers.get("session_start")!({ reason: "startup" }, { cwd: repo, hasUI: false, ...(trusted === undefined ? {} : { isProjectTrusted: () => trusted }) });

    assert.ok((await names()).includes("scout"), "bundled agents complete from the start");
    assert.ok(!(await names()).includes("proj"), "before session_start the project is not read");
    await session(false);
    assert.ok(!(await names()).includes("proj"), "untrusted: not read");
    await session(true);
    assert.ok(!(await names()).includes("proj"), "pi says trusted, but nobody decided (pi never asks about .pi/agents): not read");
    await session(undefined);
    assert.ok(!(await names()).includes("proj"), "a pi without isProjectTrusted, no decision: not read");
    await recordTrustDecision(agentDir, repo, "trusted");
    for (const pi of [true, undefined]) {
      await session(pi);
      assert.ok((await names()).includes("proj"), `the person trusted it (pi says ${pi}): read`);
    }
    await session(false);
    assert.ok(!(await names()).includes("proj"), "pi's no comes first");
    assert.ok(!(await names()).includes("evil"));
    assert.equal(existsSync(marker), false, "no front matter code ran");
  });
});
