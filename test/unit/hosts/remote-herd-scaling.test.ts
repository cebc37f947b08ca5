/**
 * A herd of 64 across 4 remote hosts costs per sheep what 16 on one host do (issue 36): the lines
 * and bytes every host's link carries while one wait holds every sheep and they answer in turn,
 * counted (not timed) over the real agent server and proxies (test/support/loopback-link.ts), and
 * one `herd` asks each host's multiplexer once and each sheep's files once.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { herdWork } from "../../support/herd-work.ts";

describe("a herd of 64 on 4 remote hosts", () => {
  it("carries as many link lines and bytes per answer as 16 sheep on one host", async () => {
    const one = await herdWork(16, { hosts: 1 });
    const four = await herdWork(64, { hosts: 4 });
    const l1 = one.link!;
    const l4 = four.link!;
    const per = (x: number, n: number) => x / n;
    // Each answer: its result, its status and its message log asked once, and one change event.
    assert.equal(per(l4.lines, 64), per(l1.lines, 16), `link lines a sheep: ${per(l1.lines, 16)} at 1 x 16, ${per(l4.lines, 64)} at 4 x 16`);
    assert.ok(per(l4.lines, 64) <= 20, `${l4.lines} lines for 64 answers`);
    assert.equal(per(l4.events, 64), 1, `${l4.events} change events for 64 answers`);
    // Ids grow by a digit; a line that named every sheep would grow by hundreds of bytes a sheep.
    assert.ok(per(l4.bytes, 64) <= per(l1.bytes, 16) * 1.1, `bytes a sheep: ${per(l1.bytes, 16)} at 1 x 16, ${per(l4.bytes, 64)} at 4 x 16`);
    for (const [method, k] of l4.requests)
      assert.equal(k / 64, (l1.requests.get(method) ?? 0) / 16, `${method}: ${l1.requests.get(method)} at 1 x 16, ${k} at 4 x 16`);
  });

  it("asks each host's multiplexer once for a herd of 64, and no host about another's sheep", async () => {
    const seen: { n: number; link: number[] }[] = [];
    for (const hosts of [1, 4]) {
      const n = 16 * hosts;
      const w = await herdWork(n, { hosts, herd: true });
      seen.push({ n, link: w.herdLiveness! });
    }
    assert.deepEqual(seen[0]!.link, [16], "one liveness question of 16 panes");
    assert.deepEqual(seen[1]!.link, [16, 16, 16, 16], "one liveness question a host, each of its 16 panes");
  });

  it("sends one herd of 64 on 4 tmux hosts one request a sheep and one a host, never a question tmux cannot answer", async () => {
    const w = await herdWork(64, { hosts: 4, herd: true });
    // A sheep's status files, read there; its host's multiplexer, asked once. tmux keeps no agent status.
    assert.deepEqual(Object.fromEntries(w.herdRequests!), { "runtime.liveness": 4, "files.snapshot": 64 });
  });
});
