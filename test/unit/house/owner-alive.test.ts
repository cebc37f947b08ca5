/**
 * Whether the shepherd that owns a record still runs. A quit shepherd's pi ends before its parent
 * (the multiplexer) reaps it, and a next shepherd that took that zombie for a live owner left the
 * quit's working sheep unadopted: its wait said [unknown_prompt].
 */
import assert from "node:assert/strict";
import { execa } from "execa";
import { describe, it } from "node:test";
import { ownerAlive, processOwner } from "../../../src/compose.ts";

describe("ownerAlive", () => {
  it("takes a zombie (ended, not reaped) for gone, a running process for alive, and our own token only for us", async () => {
    // The shell's background child ends once the shell has become a sleep that never reaps it. A
    // child that ended at once could be reaped by the shell itself before its exec (dash does, now and then).
    const parent = execa("sh", ["-c", "sleep 0.5 & echo $!; exec sleep 30"], { stdin: "ignore", buffer: false });
    try {
      const zombie = await new Promise<number>((resolve, reject) => {
        parent.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim())));
        parent.once("error", reject);
      });
      for (let i = 0; i < 150 && !(await isZombie(zombie)); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(await isZombie(zombie), "the child is a zombie");
      assert.equal(ownerAlive(`${zombie}:somebody`), false, "a zombie owner is gone");
      assert.equal(ownerAlive(`${parent.pid}:somebody`), true, "a running owner is alive");
      assert.equal(ownerAlive(processOwner()), true);
      assert.equal(ownerAlive(`${process.pid}:another-token`), false);
    } finally {
      parent.kill("SIGKILL");
      await parent.catch(() => undefined);
    }
  });
});

async function isZombie(pid: number): Promise<boolean> {
  const { readFile } = await import("node:fs/promises");
  const stat = await readFile(`/proc/${pid}/stat`, "latin1").catch(() => "");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
}
