/**
 * Only one shepherd sends: the one that holds `sender.lock` beside the outbox. Every shepherd
 * writes its events to the outbox; the holder sends them all. A holder that crashed stops
 * refreshing the lock, and the next shepherd takes it over once it is stale (LOCK_STALE_MS).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import { LOCK_STALE_MS, lockFs } from "../stores/state-lock.ts";

export interface SenderLock {
  /** True when this shepherd holds the lock now (taken now or before); never waits for another holder. */
  take(): Promise<boolean>;
  release(): Promise<void>;
}

export class FileSenderLock implements SenderLock {
  private held: (() => Promise<void>) | undefined;
  private lost = false;

  constructor(private readonly dir: string) {}

  async take(): Promise<boolean> {
    if (this.held && !this.lost) return true;
    this.held = undefined;
    this.lost = false;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.held = await lockfile.lock(this.dir, {
        lockfilePath: join(this.dir, "sender.lock"),
        realpath: false,
        stale: LOCK_STALE_MS,
        update: 2_000,
        retries: 0,
        fs: lockFs,
        // The default throws from a timer, which would take the whole pi down: the next take tries again.
        onCompromised: () => {
          this.lost = true;
        },
      });
      return true;
    } catch {
      return false;
    }
  }

  async release(): Promise<void> {
    const release = this.held;
    this.held = undefined;
    if (release && !this.lost) await release().catch(() => undefined);
  }
}
