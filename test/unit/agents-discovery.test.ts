import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { discoverAgents, type AgentScope } from "../../src/agents/discover.js";
import { parseAgentFile } from "../../src/agents/parse.js";
import { repoRoot } from "../support/rpc-shepherd.js";

const agentFile = (name: string, description: string, extra = "", body = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;

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

  const find = (scope: AgentScope, cwd = project) => discoverAgents({ cwd, scope, agentDir, bundledDir, home });
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

  it("the first definition of a name wins: user, then project, then bundled", async () => {
    const all = byName(await find("both"));
    assert.equal(all.get("scout")?.description, "the user's scout");
    assert.equal(all.get("scout")?.source, "user");
    assert.equal(all.get("planner")?.description, "the project's planner");
    assert.equal(all.get("planner")?.source, "project");
    assert.equal(all.get("planner")?.path, join(project, ".pi", "agents", "planner.md"));
    assert.equal(all.get("worker")?.source, "bundled");
    assert.equal(all.get("shared")?.description, "from agentDir", "<agentDir>/agents comes before ~/.agents/agents");
    assert.equal(all.get("homeonly")?.source, "user");
    assert.equal(all.get("dotagents")?.source, "project", "the same ancestor's .agents/agents is read after its .pi/agents");
  });

  it("each scope reads only its own directories, and bundled agents are always there", async () => {
    const user = byName(await find("user"));
    assert.deepEqual([...user.keys()].sort(), ["homeonly", "planner", "scout", "shared", "worker"]);
    assert.equal(user.get("planner")?.source, "bundled");
    const proj = await find("project");
    assert.deepEqual(new Set(proj.agents.map((a) => `${a.name}:${a.source}`)), new Set(["scout:project", "planner:project", "dotagents:project", "worker:bundled"]));
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
      assert.deepEqual(d.agents.filter((a) => a.source === "project").map((a) => a.name), ["appagent"], "the parent repo's agents do not mix in");
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
      ["twin-b.md", agentFile("good", "the same name again"), /name "good" is already defined in .*twin-a\.md/],
      ["twin-a.md", agentFile("good", "the first of two"), /unused/],
    ];
    for (const [file, text] of cases) await put(join(dir, file), text);
    const d = await discoverAgents({ cwd: root, scope: "user", agentDir: join(root, "nothing"), bundledDir: dir, home: join(root, "nohome") });
    assert.deepEqual(d.agents.map((a) => [a.name, a.description]), [["good", "the first of two"]]);
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
    const s = parseAgentFile(agentFile("s", "d", "tools: read, grep ,ls\nmodel: scripted/scripted-model\nthinking: low\n", "\nBe brief.\n\n"), "/x/s.md", "user");
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
    const none = parseAgentFile(agentFile("n", "d", "tools: \"\"\n"), "/x/n.md", "user");
    assert.ok(none.ok);
    assert.equal(none.definition.tools, undefined, "an empty list means pi's default tools");
    assert.equal(none.definition.systemPrompt, undefined);
  });

  it("lists the bundled agents, each with a tool list that fits its role", async () => {
    const d = await discoverAgents({ cwd: root, scope: "user", agentDir: join(root, "nothing"), bundledDir: join(repoRoot, "agents"), home: join(root, "nohome") });
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
