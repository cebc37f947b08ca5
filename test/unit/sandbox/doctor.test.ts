/** The doctor's sandbox check: real bubblewrap here, and what it says where bubblewrap or Linux is missing. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sandboxCheck } from "../../../src/doctor/sandbox.ts";
import { checkBwrap } from "../../../src/sandbox/probe.ts";

describe("doctor: sandbox", () => {
  it("passes where bubblewrap makes a sandbox (this machine has it: the escape suite needs it)", async () => {
    const c = await sandboxCheck({ default: "off" }, process.env);
    assert.equal(c.verdict, "pass", c.detail);
    assert.match(c.detail, /bubblewrap at \/\S*bwrap makes a sandbox here/);
  });

  it("a bubblewrap that is not installed: a warning with the install line, a failure where the default is on", async () => {
    const missing = (env: NodeJS.ProcessEnv) => checkBwrap("bwrap-that-is-not-there", env);
    const off = await sandboxCheck({ default: "off" }, process.env, missing);
    assert.equal(off.verdict, "warn");
    assert.match(off.detail, /bwrap-that-is-not-there\) is not installed/);
    assert.match(off.fix ?? "", /apt-get install bubblewrap/);
    assert.equal((await sandboxCheck({ default: "on" }, process.env, missing)).verdict, "fail");
  });

  it("a bubblewrap that cannot make namespaces is named as such", async () => {
    // `false` stands in for a bwrap the kernel refuses: it exits non-zero.
    const c = await sandboxCheck({ default: "on" }, process.env, (env) => checkBwrap("false", env));
    assert.equal(c.verdict, "fail");
    assert.match(c.detail, /cannot make a sandbox here .*user namespaces/);
  });

  it("the probe loads the sheep's seccomp filter in bubblewrap: one it cannot load fails the probe", async () => {
    assert.equal((await checkBwrap()).ok, true, "the real program loads");
    // Not a whole instruction (8 bytes each): the kernel, and bubblewrap before it, refuse it.
    const broken = await checkBwrap("bwrap", process.env, Buffer.from([1, 2, 3]));
    assert.equal(broken.ok, false);
    assert.match(broken.problem ?? "", /cannot make a sandbox here \(.*seccomp|cannot make a sandbox here \(.*Invalid/i);
  });

  it("off Linux: sandboxed sheep are not supported", async () => {
    const c = await sandboxCheck({ default: "on" }, process.env, async () => ({ ok: true, path: "/x" }), "darwin");
    assert.deepEqual([c.verdict, /need Linux; this is darwin/.test(c.detail)], ["fail", true]);
  });
});
