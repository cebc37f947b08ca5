import { readFileSync } from "node:fs";

/** Whether a process runs; EPERM means it does, under another user. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether a process runs and has not merely ended unreaped: a pi killed a moment ago stays a
 * zombie until its parent (the tmux server) collects it, and kill(pid, 0) still answers for it.
 * Linux says so in /proc; elsewhere the answer is pidAlive's.
 */
export function pidRunning(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return true; // no /proc here, or not ours to read: kill(0) is the best witness there is
  }
  // The state follows the command name, which is in parentheses and may hold spaces or ")".
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}
