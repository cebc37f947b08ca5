import { watch } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname } from "node:path";

/**
 * Resolves once the file exists (fs.watch on its directory plus a short poll). Callers take the
 * time from the file's content: file timestamps come from the kernel's coarse clock, which
 * lags by up to a scheduler tick.
 */
export async function whenFileExists(path: string, timeoutMs: number): Promise<void> {
  const mtime = async () => (await stat(path).catch(() => undefined))?.mtimeMs;
  return new Promise<void>((resolve, reject) => {
    let done = false;
    const finish = (err: Error | undefined) => {
      if (done) return;
      done = true;
      watcher?.close();
      clearInterval(poll);
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const check = () => void mtime().then((m) => m !== undefined && finish(undefined));
    let watcher: ReturnType<typeof watch> | undefined;
    try {
      watcher = watch(dirname(path), (_e, name) => {
        if (name === null || name === basename(path)) check();
      });
    } catch {
      watcher = undefined;
    }
    const poll = setInterval(check, 20);
    const timer = setTimeout(() => finish(new Error(`${path} did not appear within ${timeoutMs} ms`)), timeoutMs);
    check();
  });
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for a process to end; kills that pid (only it) when it outlives the grace period. */
export async function untilGone(pid: number, graceMs = 5000): Promise<void> {
  const until = Date.now() + graceMs;
  while (processAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  if (processAlive(pid)) process.kill(pid, "SIGKILL");
}
