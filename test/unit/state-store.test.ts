import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { AgentRecord } from "../../src/core/types.js";
import { FileStateStore } from "../../src/protocol/state-store.js";

const agent = (agentId: string, owner: string): AgentRecord => ({
  agentId,
  agent: "echo",
  label: agentId,
  runtime: "tmux",
  paneId: "%1",
  cwd: "/",
  sessionPath: "/s.jsonl",
  createdAt: "2026-01-01T00:00:00Z",
  owner,
  state: "idle",
});

describe("state.json store", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-store-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps every owner's records when two shepherds write at once", async () => {
    const d = join(dir, "merge");
    const a = new FileStateStore(d);
    const b = new FileStateStore(d);
    await Promise.all([
      a.save("A", { agents: [agent("a_aaaaaaaaa1", "A")], prompts: [{ promptId: "p_aaaaaaaaa1", agentId: "a_aaaaaaaaa1", submittedAt: "x" }] }),
      b.save("B", { agents: [agent("a_bbbbbbbbb1", "B")], prompts: [] }),
      a.save("A", { agents: [agent("a_aaaaaaaaa1", "A"), agent("a_aaaaaaaaa2", "A")], prompts: [] }),
    ]);
    const { state, warnings } = await new FileStateStore(d).load();
    assert.deepEqual(warnings, []);
    assert.deepEqual(state.agents.map((x) => x.agentId).sort(), ["a_aaaaaaaaa1", "a_aaaaaaaaa2", "a_bbbbbbbbb1"]);
    assert.deepEqual(state.prompts, [], "A's latest save replaced its prompts");
    assert.equal((await stat(join(d, "state.json"))).mode & 0o777, 0o600);
    assert.equal((await stat(d)).mode & 0o777, 0o700);
    assert.equal(existsSync(join(d, "state.lock")), false, "the lock is released");
  });

  it("drops records a shepherd let go of, even under the name of the owner it adopted them from", async () => {
    const d = join(dir, "forget");
    const s = new FileStateStore(d);
    await s.save("OLD", { agents: [agent("a_ddddddddd1", "OLD"), agent("a_ddddddddd2", "OLD")], prompts: [] });
    await s.save("NEW", { agents: [agent("a_ddddddddd1", "NEW")], prompts: [], forgotten: ["a_ddddddddd2"] });
    assert.deepEqual((await s.load()).state.agents.map((a) => [a.agentId, a.owner]), [["a_ddddddddd1", "NEW"]]);
  });

  it("moves a corrupt file aside with a warning and starts empty", async () => {
    const d = join(dir, "corrupt");
    const s = new FileStateStore(d);
    await s.save("A", { agents: [], prompts: [] });
    await writeFile(join(d, "state.json"), "{ not json");
    const { state, warnings } = await s.load();
    assert.deepEqual(state, { agents: [], prompts: [] });
    assert.match(warnings[0]!, /could not be read .* moved it to .*state\.json\.corrupt-\d+/);
    const aside = (await readdir(d)).find((n) => n.startsWith("state.json.corrupt-"))!;
    assert.equal(await readFile(join(d, aside), "utf8"), "{ not json");
  });

  it("takes over a lock left by a process that is gone", async () => {
    const d = join(dir, "stale");
    const s = new FileStateStore(d);
    await s.save("A", { agents: [], prompts: [] });
    await writeFile(join(d, "state.lock"), "999999999");
    await s.save("A", { agents: [agent("a_ccccccccc1", "A")], prompts: [] });
    assert.equal((await s.load()).state.agents.length, 1);
  });
});
