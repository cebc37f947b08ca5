import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentStatus } from "../../../src/ports/types.ts";
import { sheepLine } from "../../../src/texts/format.ts";

describe("the line about one sheep", () => {
  const base: AgentStatus = {
    agentId: "a_1",
    agent: "worker",
    label: "w",
    runtime: "tmux",
    state: "exited",
    paneAlive: false,
    createdAt: "2026-01-01T00:00:00Z",
  };
  const now = Date.parse("2026-01-01T00:03:00Z");

  it("says the pane is gone when it is", () => {
    assert.equal(sheepLine(base, now), "w (a_1, worker): exited, pane gone · tmux · 3m old");
  });

  it("says how pi ended, not that its pane is gone, when the multiplexer kept the pane", () => {
    assert.equal(
      sheepLine({ ...base, runtimeStatus: "pi exited (signal SIGKILL)" }, now),
      "w (a_1, worker): exited · tmux · 3m old (tmux says pi exited (signal SIGKILL))",
    );
  });
});
