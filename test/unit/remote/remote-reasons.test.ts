/**
 * Why a host is down, as the person reads it in status lines and errors: one plain line, bounded,
 * whatever ssh or the host's agent said (an agent's init error may be many lines and long).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { downReason, lasting, MAX_DOWN_REASON, sshReason } from "../../../src/remote/link/reasons.ts";

test("a down reason is one plain line, bounded, whatever came", () => {
  const init = `[runtime_unavailable] herdr is not installed there\nDoctor: fail\n\u001b]2;retitled\u0007${"x".repeat(2000)}`;
  const r = downReason(init);
  assert.doesNotMatch(r, /[\u0000-\u001f\u007f]/, "no line break, no escape");
  assert.ok(r.length <= MAX_DOWN_REASON + 1, `bounded: ${r.length}`);
  assert.match(r, /^\[runtime_unavailable\] herdr is not installed there/);
  assert.equal(downReason("Connection refused"), "Connection refused");
});

test("ssh's reason is its line that says why; a host key or a refused key is lasting, a refused connection is not", () => {
  const stderr = "Warning: Permanently added 'box' (ED25519) to the list of known hosts.\nuser@box: Permission denied (publickey).\n";
  assert.equal(sshReason(stderr), "user@box: Permission denied (publickey).");
  assert.equal(lasting(sshReason(stderr)), true);
  assert.equal(lasting("ssh: connect to host box port 22: Connection refused"), false);
});
