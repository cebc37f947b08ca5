/**
 * Faults of the connection and of the remote host, with real OpenSSH and real pi sheep on the
 * test's remote host (test/support/remote-host.ts), nothing lost (issue 24): the ControlMaster
 * killed mid-wait, sshd restarted mid-wait: the sheep keeps working under the remote tmux, the
 * shepherd reconnects, the answer arrives once. The remote tmux server killed: the wait fails
 * [pane_gone] or [pi_exited], nothing hangs; then nothing of ours is left on either side.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { RemoteHost } from "../support/remote-host.ts";
import { assertNothingLeftRemote } from "../support/remote-world.ts";
import { type FaultWorld, faultWorld } from "../support/remote-faults.ts";
import type { RpcShepherd } from "../support/rpc-shepherd.ts";
import type { Scene } from "../support/scene.ts";

describe("remote sheep through network and host faults", { timeout: 900_000 }, () => {
  let f: FaultWorld;
  let remote: RemoteHost;
  let scene: Scene;
  let shepherd: RpcShepherd;
  const ok = (args: unknown) => scene.ok(args);

  before(async () => {
    f = await faultWorld("remote-faults");
    ({ remote, scene, shepherd } = f);
  });

  after(() => f?.rw.world.cleanup());

  it("the ControlMaster killed mid-wait: the shepherd reconnects and the answer arrives once", async () => {
    await f.untilReachable();
    await f.fresh("master");
    const { promptId, item } = await f.waitThrough("MASTER", 6_000, async () => {
      const masters = remote.localSsh().filter((p) => {
        const argv = readFileSync(`/proc/${p}/cmdline`, "latin1").split("\0");
        return argv.some((a) => /^-M+$|ControlMaster=(yes|auto|autoask)/i.test(a));
      });
      assert.ok(
        masters.length > 0,
        `a ControlMaster among ${remote.localSsh().map((p) => readFileSync(`/proc/${p}/cmdline`, "latin1").replaceAll("\0", " "))}`,
      );
      for (const pid of masters) process.kill(pid, "SIGKILL");
    });
    await f.arrivedOnce("MASTER", promptId, item);
  });

  it("sshd restarted mid-wait, its connections dropped: the shepherd reconnects and the answer arrives once", async () => {
    await f.untilReachable();
    await f.fresh("sshd");
    const { promptId, item } = await f.waitThrough("SSHD", 6_000, () => remote.restartSshd({ dropConnections: true }));
    await f.arrivedOnce("SSHD", promptId, item);
  });

  it("the remote tmux server killed mid-wait: the wait fails [pane_gone] or [pi_exited], nothing hangs", async () => {
    await f.untilReachable();
    await f.fresh("tmux");
    const { item } = await f.waitThrough("TMUX", 60_000, async () => {
      const killed = await remote.killTmux();
      assert.ok(killed.length > 0, "a remote tmux server was killed");
    });
    assert.equal(item.status, "failed", JSON.stringify(item));
    assert.match(item.error!, /^\[(pane_gone|pi_exited)\] /);
    await ok({ action: "prune" });
    await shepherd.stop();
    await assertNothingLeftRemote(f.rw, { shepherdsStopped: true });
  });
});
