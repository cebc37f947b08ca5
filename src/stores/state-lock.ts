import fs from "node:fs";
import lockfile from "proper-lockfile";

/**
 * How long a lock may go without its holder refreshing it before it counts as left by a crashed
 * process. A live holder refreshes it every UPDATE_MS, so a long write never loses the lock.
 */
export const LOCK_STALE_MS = 10_000;
const LOCK_UPDATE_MS = 2_000;

/**
 * Waits with backoff for longer than the stale time plus one refresh, so a writer waiting on a
 * crashed holder's lock outlasts it and takes it over (about 30 s in all).
 */
const RETRIES = { retries: 70, factor: 1.5, minTimeout: 10, maxTimeout: 500, randomize: true };

type Callback = (err: NodeJS.ErrnoException | null) => void;

/**
 * The calls proper-lockfile makes (realpath is off), with two changes: its lock directory is private
 * (0700, not 0777 less the umask), and a plain `state.lock` file left by an older pi-shepherd
 * (which locked with a pid file) can be removed once stale instead of failing every take-over.
 */
export const lockFs = {
  stat: fs.stat,
  utimes: fs.utimes,
  mkdir: (path: string, cb: Callback) => fs.mkdir(path, { mode: 0o700 }, cb),
  rmdir: (path: string, cb: Callback) => fs.rmdir(path, (err) => (err?.code === "ENOTDIR" ? fs.unlink(path, cb) : cb(err))),
  rmdirSync: (path: string) => {
    try {
      fs.rmdirSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOTDIR") throw e;
      fs.unlinkSync(path);
    }
  },
};

/**
 * Runs fn while holding `lockPath` for `file`. Only the holder ever removes the lock (through the
 * release proper-lockfile hands back); a live holder's lock is never taken, a crashed one's is
 * taken over once stale. Throws when the lock could not be had, or was lost while fn ran.
 */
export async function withFileLock<T>(file: string, lockPath: string, fn: () => Promise<T>): Promise<T> {
  let lost: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      lockfilePath: lockPath,
      // The locked file may not exist yet (the first write creates it).
      realpath: false,
      stale: LOCK_STALE_MS,
      update: LOCK_UPDATE_MS,
      retries: RETRIES,
      fs: lockFs,
      // The default throws from a timer, which would take the whole pi process down.
      onCompromised: (e) => {
        lost = e;
      },
    });
  } catch (e) {
    throw new Error(`could not take the lock ${lockPath}: ${(e as Error).message}`);
  }
  try {
    const out = await fn();
    if (lost) throw new Error(`lost the lock ${lockPath} while holding it: ${lost.message}`);
    return out;
  } finally {
    await release().catch(() => undefined);
  }
}
