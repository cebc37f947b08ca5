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
 * Linux says so in /proc; elsewhere the answer is pidAlive's. `probe` is for tests.
 */
export function pidRunning(pid: number, probe: PidProbe = systemProbe): boolean {
  if (!probe.alive(pid)) return false;
  let stat: string;
  try {
    stat = probe.stat(pid);
  } catch {
    // Reaped between the two looks (its /proc entry went with it), no /proc here, or not ours
    // to read: kill(0) asked again is the best witness there is, and it knows the first.
    return probe.alive(pid);
  }
  // The state follows the command name, which is in parentheses and may hold spaces or ")".
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

/** The two system calls pidRunning asks. */
export interface PidProbe {
  alive(pid: number): boolean;
  stat(pid: number): string;
}

const systemProbe: PidProbe = { alive: pidAlive, stat: (pid) => readFileSync(`/proc/${pid}/stat`, "latin1") };
