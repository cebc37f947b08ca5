/** An egress refusal through the real audit log file and back: its target survives readAudit's checks, a forged one does not. */
import assert from "node:assert/strict";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { stamped } from "../../../src/ports/audit.ts";
import { AuditLog, readAudit } from "../../../src/stores/audit-log.ts";
import { egressPolicy } from "../../../src/sandbox/egress/policy.ts";
import { EgressProxy } from "../../../src/sandbox/egress/proxy.ts";
import { connectTunnel, tempDir } from "../../support/egress-sockets.ts";

test("an egress refusal is an audit line with action egress, reason and target, read back as written", async (t) => {
  const dir = await tempDir(t);
  const audit = new AuditLog({ dir: join(dir, "state") });
  const proxy = new EgressProxy({ audit: (e) => audit.record(stamped(e, "1:t", Date.now())) });
  t.after(() => proxy.closeAll());
  const socketPath = join(dir, "a1.sock");
  await proxy.open("a_0000000001", { socketPath, policy: egressPolicy([], []), logFile: join(dir, "a1.jsonl") });
  assert.equal((await connectTunnel(socketPath, "exfil.example:443")).status, 403);
  await appendFile(join(dir, "state", "audit.ndjson"), `${JSON.stringify({ event: "refusal", time: "x", owner: "1:t", target: 42 })}\n`);
  const events = await readAudit(join(dir, "state"), { limit: 10 });
  assert.deepEqual(
    events.map((e) => [e.event, e.action, e.agentId, e.reason, e.target]),
    [["refusal", "egress", "a_0000000001", "not_allowed", "exfil.example:443"]],
  );
});
