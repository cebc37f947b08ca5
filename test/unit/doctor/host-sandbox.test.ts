/** The doctor's sandbox checks of a host, from what the probe found there (issue 33). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hostSandboxChecks } from "../../../src/doctor/hosts.ts";

const label = (what: string) => `host gpu: ${what}`;
const found = { reached: true as const, stateDir: "/home/me/.pi/agent/pi-shepherd", userns: { clone: "-", max: "63000", apparmor: "-" } };
const byName = (cs: ReturnType<typeof hostSandboxChecks>) => Object.fromEntries(cs.map((c) => [c.name, c]));

describe("doctor: a host's sandbox", () => {
  it("passes where bwrap made a sandbox there", () => {
    const c = byName(hostSandboxChecks({ ...found, bwrap: "/usr/bin/bwrap", bwrapRun: "ok" }, label, { default: "off" }));
    assert.deepEqual(
      Object.values(c).map((x) => [x.name, x.verdict]),
      [
        ["host gpu: bubblewrap", "pass"],
        ["host gpu: user namespaces", "pass"],
        ["host gpu: egress proxy", "pass"],
      ],
    );
  });

  it("no bwrap there: a warning with the install line, a failure where the user's default is on", () => {
    const warned = byName(hostSandboxChecks(found, label, { default: "off" }))["host gpu: bubblewrap"]!;
    assert.deepEqual([warned.verdict, warned.detail], ["warn", "bubblewrap (bwrap) is not installed there: a sandboxed sheep there cannot start"]);
    assert.match(warned.fix!, /apt-get install bubblewrap/);
    assert.equal(byName(hostSandboxChecks(found, label, { default: "on" }))["host gpu: bubblewrap"]!.verdict, "fail");
  });

  it("the kernel's switches against user namespaces there are named; a state dir too deep for the proxy's socket is told", () => {
    const c = byName(
      hostSandboxChecks({ ...found, stateDir: `/${"d".repeat(80)}/pi-shepherd`, userns: { clone: "0", max: "1", apparmor: "-" } }, label, { default: "off" }),
    );
    assert.deepEqual(
      [c["host gpu: user namespaces"]!.verdict, c["host gpu: user namespaces"]!.detail],
      ["warn", "kernel.unprivileged_userns_clone is 0 there"],
    );
    assert.equal(c["host gpu: egress proxy"]!.verdict, "warn");
    assert.match(c["host gpu: egress proxy"]!.detail, /too long for a Unix socket/);
  });
});
