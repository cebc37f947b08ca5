/**
 * What a test started and must not leave behind: sheep pi processes and the sheep's files.
 * Processes are found by pid only (status.json, or the sheep directory in a process's own
 * environment), never by name.
 */
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** A zombie (exited, not yet reaped) is not alive. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(String(pid));
}

export function sheepRoot(agentDir: string): string {
  return join(agentDir, "pi-shepherd", "sheep");
}

/** The pid a ready sheep reported in its status.json (read it right after start: close removes it). */
export async function sheepPid(agentDir: string, agentId: string): Promise<number> {
  const status = JSON.parse(await readFile(join(sheepRoot(agentDir), agentId, "status.json"), "utf8")) as { pid: number };
  return status.pid;
}

/**
 * Pids of live processes that belong to a sheep directory under agentDir: every pi a sheep ran,
 * whether or not it ever became ready. The launcher runs pi in its own process, whose command
 * line names the sheep's directory (the launcher's spec path, then the title "pi <dir>"); the
 * variables it sets are not in /proc/<pid>/environ, which shows a process's environment at its
 * start, but they are in that of every child. Linux only (/proc); elsewhere the pids from
 * status.json are all a test can check.
 */
export async function sheepProcesses(agentDir: string): Promise<number[]> {
  if (!existsSync("/proc/self/environ")) return [];
  const root = `${sheepRoot(agentDir)}/`;
  const marker = `PI_SHEPHERD_SHEEP_DIR=${root}`;
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let env: string;
    let cmdline: string;
    try {
      [env, cmdline] = await Promise.all([readFile(`/proc/${name}/environ`, "latin1"), readFile(`/proc/${name}/cmdline`, "latin1")]);
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const ours = env.split("\0").some((kv) => kv.startsWith(marker)) || cmdline.includes(root);
    if (ours && pidAlive(Number(name))) found.push(Number(name));
  }
  return found;
}

function isZombie(pid: string): boolean {
  if (!existsSync("/proc/self/stat")) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** Polls until no sheep process of agentDir and none of the given pids is alive, or the deadline. */
export async function livingSheep(agentDir: string, pids: readonly number[], withinMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const alive = [...new Set([...pids.filter(pidAlive), ...(await sheepProcesses(agentDir))])];
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Kills what a failed test left, by pid. */
export async function killSheep(agentDir: string, pids: readonly number[]): Promise<void> {
  for (const pid of new Set([...pids, ...(await sheepProcesses(agentDir))])) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Entries of the sheep directories under agentDir, as "<agentId>/<name>" (empty when there are none). */
export async function sheepFiles(agentDir: string): Promise<string[]> {
  const root = sheepRoot(agentDir);
  let ids: string[];
  try {
    ids = await readdir(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const id of ids.sort()) {
    const names = await readdir(join(root, id)).catch(() => [] as string[]);
    if (names.length === 0) out.push(`${id}/`);
    for (const n of names.sort()) out.push(`${id}/${n}`);
  }
  return out;
}

/** What a closed sheep keeps by design: its conversation, the card that resumes it, its evidence, and (sandboxed) its egress log. */
export function notKept(files: readonly string[]): string[] {
  return files.filter((f) => !/\/(session\.jsonl|resume\.json|evidence|egress\.ndjson)$/.test(f));
}
