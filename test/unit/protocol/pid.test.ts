/**
 * pidRunning asks twice (kill(0), then /proc): a pi its parent reaps between the two looks has
 * no /proc entry any more, and that answer must not read as "still running". It did, and a warm
 * sheep killed from outside was handed out to a start (warm-pool e2e, seen once in CI).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type PidProbe, pidRunning } from "../../../src/protocol/pid.ts";

function gone(): Error {
  return Object.assign(new Error("ENOENT: no such file or directory, open '/proc/4242/stat'"), { code: "ENOENT" });
}

describe("pidRunning", () => {
  it("a process reaped between kill(0) and /proc is not running", () => {
    let reaped = false;
    const probe: PidProbe = {
      alive: () => !reaped,
      stat: () => {
        reaped = true; // its parent collected it just now
        throw gone();
      },
    };
    assert.equal(pidRunning(4242, probe), false);
  });

  it("a process whose /proc entry cannot be read but that kill(0) still sees is running (no /proc, or another's)", () => {
    const probe: PidProbe = {
      alive: () => true,
      stat: () => {
        throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      },
    };
    assert.equal(pidRunning(4242, probe), true);
  });

  it("reads the state after the command name, which may hold spaces and parentheses", () => {
    const probe = (state: string): PidProbe => ({ alive: () => true, stat: () => `4242 (pi ) x (y) ${state} 1 4242 4242 0` });
    assert.equal(pidRunning(4242, probe("Z")), false, "a zombie");
    assert.equal(pidRunning(4242, probe("S")), true, "asleep");
    assert.equal(pidRunning(4242, probe("R")), true, "running");
    assert.equal(pidRunning(4242, { alive: () => false, stat: () => assert.fail("not asked") }), false, "gone");
  });

  it("this very process runs", () => {
    assert.equal(pidRunning(process.pid), true);
  });
});
