/**
 * The fake herdr's state lock. A herdr CLI running inside a sheep's pane dies with the pane while it
 * may hold the lock; the fake must then not hold every other caller (the shepherd's liveness
 * question included) until the lock's 30 s stale age, or a killed pane's wait runs to its deadline.
 * herdr's own server never waits on a client that is gone.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createFakeHerdr, type FakeHerdr } from "../../support/fake-herdr.ts";

/** Well under the lock's stale age: a call still pending then is held by the lock. */
const BOUND_MS = 10_000;

async function settledWithin<T>(work: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"pending">((resolve) => {
    timer = setTimeout(() => resolve("pending"), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A child that runs until killed, and its exit. */
function holder(): { pid: number; exited: Promise<void>; kill: () => void } {
  const child = spawn("sleep", ["600"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { pid: child.pid!, exited, kill: () => child.kill("SIGKILL") };
}

async function plantLock(fake: FakeHerdr, pid: number): Promise<void> {
  const lock = path.join(fake.stateDir, "state.lock");
  await mkdir(lock);
  await writeFile(path.join(lock, "pid"), String(pid));
}

describe("fake herdr: the state lock of a holder that died", () => {
  let fake: FakeHerdr;
  before(async () => {
    fake = await createFakeHerdr();
  });
  after(async () => {
    await fake.cleanup();
  });

  it("is taken at once when its holder is dead, not after the stale age", async () => {
    const h = holder();
    h.kill();
    await h.exited;
    await plantLock(fake, h.pid);
    const r = await settledWithin(fake.herdr(["pane", "list"]), BOUND_MS);
    assert.notEqual(r, "pending", "the call waited on a dead holder's lock");
    assert.equal(r !== "pending" && r.exitCode, 0);
  });

  it("holds callers while its holder lives, and frees them when the holder dies", async () => {
    const h = holder();
    await plantLock(fake, h.pid);
    const call = fake.herdr(["pane", "list"]);
    assert.equal(await settledWithin(call, 1_000), "pending", "a live holder's lock was broken");
    h.kill();
    await h.exited;
    const r = await settledWithin(call, BOUND_MS);
    assert.notEqual(r, "pending", "the call waited on the lock after its holder died");
    assert.equal(r !== "pending" && r.exitCode, 0);
  });
});

describe("fake herdr: the state lock under many callers at once", () => {
  let fake: FakeHerdr;
  before(async () => {
    fake = await createFakeHerdr();
  });
  after(async () => {
    await fake.cleanup();
  });

  // A released lock was emptied before its directory went: a waiter's rename replaced the empty
  // directory and the holder's rmdir failed (ENOTEMPTY), as 16 terminal polls showed in the bench.
  it("every call of many at once answers", async () => {
    for (let round = 0; round < 3; round++) {
      const runs = await Promise.all(Array.from({ length: 24 }, () => fake.herdr(["pane", "list"])));
      const failed = runs.filter((r) => r.exitCode !== 0);
      assert.deepEqual(
        failed.map((r) => r.stderr.slice(0, 200)),
        [],
        `${failed.length} of 24 calls failed`,
      );
    }
  });
});
