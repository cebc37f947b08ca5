import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildLaunchSpec, MESSAGE_TOOL } from "../../../src/protocol/launch-spec.ts";
import { sheepLayout } from "../../../src/protocol/layout.ts";

const spec = (tools?: string[]) =>
  buildLaunchSpec({
    layout: sheepLayout("/state/sheep/a_0000000001"),
    agentId: "a_0000000001",
    definition: { name: "scout", description: "d", source: "user", path: "/a/scout.md", ...(tools ? { tools } : {}) },
    cwd: "/work",
    piCommand: ["/node", "/pi"],
    sheepExtension: "/pkg/extensions/sheep.ts",
    agentDir: "/agent",
    env: {},
    depth: 1,
    hasSystemPrompt: false,
  });

describe("launch spec", () => {
  it("a sheep whose agent file lists its tools keeps its line to the shepherd", () => {
    const argv = spec(["read", "grep"]).argv;
    assert.deepEqual(argv.slice(argv.indexOf("--tools"), argv.indexOf("--tools") + 2), ["--tools", `read,grep,${MESSAGE_TOOL}`]);
    const listed = spec(["read", MESSAGE_TOOL]).argv;
    assert.equal(listed[listed.indexOf("--tools") + 1], `read,${MESSAGE_TOOL}`, "named once");
    assert.equal(spec().argv.includes("--tools"), false, "no list: pi's defaults, extension tools included");
  });
});
