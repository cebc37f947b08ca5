import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentStatus } from "../../../src/ports/types.ts";
import { sheepLine } from "../../../src/texts/format.ts";
import { bytesText, egressText } from "../../../src/texts/egress.ts";

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

describe("what a sandboxed sheep tried to reach (issue 33)", () => {
  const base: AgentStatus = {
    agentId: "a_1",
    agent: "worker",
    label: "w",
    runtime: "tmux",
    state: "idle",
    paneAlive: true,
    createdAt: "2026-01-01T00:00:00Z",
    sandboxed: true,
  };
  const now = Date.parse("2026-01-01T00:03:00Z");

  it("status says sandboxed, and with the counts of its egress log when it has them", () => {
    assert.equal(sheepLine(base, now), "w (a_1, worker): idle · tmux · sandboxed · 3m old");
    assert.equal(
      sheepLine({ ...base, egress: { allowed: 4, refused: 3, bytesUp: 1234, bytesDown: 5_600_000 } }, now),
      "w (a_1, worker): idle · tmux · sandboxed (egress: 4 allowed, 3 refused, 1.2 kB up, 5.6 MB down) · 3m old",
    );
  });

  it("bytes for a reader", () => {
    assert.deepEqual([0, 999, 1000, 1550, 123_456, 9e15, 9e18].map(bytesText), ["0 B", "999 B", "1 kB", "1.6 kB", "123 kB", "9 PB", "9000 PB"]);
  });

  it("read: the counts, then each entry on a line; a sheep with no log, sandboxed or not, is told apart", () => {
    const text = egressText(
      "w (a_1)",
      {
        allowed: 1,
        refused: 2,
        bytesUp: 10,
        bytesDown: 2000,
        since: "2026-01-01T00:00:01.000Z",
        skipped: 1,
        entries: [
          {
            time: "2026-01-01T00:00:02.000Z",
            target: "127.0.0.1:9",
            method: "CONNECT",
            verdict: "refused",
            reason: "not_allowed",
            bytesUp: 0,
            bytesDown: 0,
            durationMs: 0,
          },
          {
            time: "2026-01-01T00:00:03.000Z",
            target: "api.example:443",
            method: "CONNECT",
            verdict: "allowed",
            address: "10.0.0.1",
            bytesUp: 10,
            bytesDown: 2000,
            durationMs: 40,
          },
        ],
      },
      true,
    );
    assert.equal(
      text,
      [
        "Egress of w (a_1) since 2026-01-01T00:00:01.000Z: 1 allowed, 2 refused, 10 B up, 2 kB down.",
        "(1 line of the log is no entry and left out.)",
        "The last 2 of 3, oldest first:",
        "2026-01-01T00:00:02.000Z refused CONNECT 127.0.0.1:9 (not_allowed)",
        "2026-01-01T00:00:03.000Z allowed CONNECT api.example:443 → 10.0.0.1 · 10 B up, 2 kB down, 40 ms",
      ].join("\n"),
    );
    assert.match(egressText("w", undefined, true), /is sandboxed and has tried to reach nothing yet/);
    assert.match(egressText("w", undefined, false), /is not sandboxed/);
  });
});
