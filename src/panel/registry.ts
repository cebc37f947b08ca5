/**
 * Every panel of this user's shepherds on this machine, each registered in a private file of its
 * own, `<agentDir>/pi-shepherd/panel/shepherds/<pid>.json` (0600, the directory 0700): its pid, port,
 * token (so a sibling panel of the same user can reach it), where it runs and since when. Any panel
 * lists them; an entry whose pid no longer runs is dropped as it is read; a file that is not
 * private, not regular, too large or not of this shape is refused (and left alone: it is not ours).
 */
import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { readBoundedSync } from "../protocol/bounded-read.ts";
import { writeJsonAtomicSync } from "../protocol/files.ts";
import { pidRunning } from "../protocol/pid.ts";
import { ensurePanelDir, panelDir, privateFileProblem } from "./private-files.ts";

export interface ShepherdEntry {
  v: 1;
  pid: number;
  port: number;
  token: string;
  /** The shepherd pi's working directory: how a person tells two apart. */
  cwd: string;
  startedAt: string;
}

/** An entry is a few hundred bytes; a cwd is bounded below. */
const MAX_BYTES = 8 * 1024;
const MAX_CWD = 4096;
/** Entries read at most: more files than this in the directory are not this user's shepherds. */
export const MAX_SHEPHERDS = 64;

export function registryDir(agentDir: string): string {
  return join(panelDir(agentDir), "shepherds");
}

export function parseEntry(v: unknown, pid: number): ShepherdEntry | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.v !== 1 || o.pid !== pid) return undefined;
  if (!Number.isInteger(o.port) || (o.port as number) <= 0 || (o.port as number) > 65535) return undefined;
  if (typeof o.token !== "string" || !/^[A-Za-z0-9_-]{32,200}$/.test(o.token)) return undefined;
  if (typeof o.cwd !== "string" || o.cwd.length > MAX_CWD || typeof o.startedAt !== "string" || Number.isNaN(Date.parse(o.startedAt))) return undefined;
  return { v: 1, pid, port: o.port as number, token: o.token, cwd: o.cwd, startedAt: o.startedAt };
}

export class ShepherdRegistry {
  constructor(
    readonly dir: string,
    private readonly running: (pid: number) => boolean = pidRunning,
  ) {}

  static of(agentDir: string): ShepherdRegistry {
    return new ShepherdRegistry(registryDir(agentDir));
  }

  private path(pid: number): string {
    return join(this.dir, `${pid}.json`);
  }

  /** This process's entry, written whole (again when its port or token changes). */
  register(e: Omit<ShepherdEntry, "v">): void {
    ensurePanelDir(join(this.dir, ".."));
    ensurePanelDir(this.dir);
    writeJsonAtomicSync(this.path(e.pid), { v: 1, ...e, cwd: e.cwd.slice(0, MAX_CWD) });
  }

  unregister(pid: number): void {
    try {
      unlinkSync(this.path(pid));
    } catch {
      // not there
    }
  }

  /** The running shepherds' entries, oldest first; stale ones (their pid gone) removed on the way. */
  list(): ShepherdEntry[] {
    if (privateFileProblem(this.dir, "dir") !== undefined) return [];
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: ShepherdEntry[] = [];
    for (const name of names) {
      const m = /^([1-9][0-9]{0,9})\.json$/.exec(name);
      if (!m) continue;
      if (out.length >= MAX_SHEPHERDS) break;
      const pid = Number(m[1]);
      const path = join(this.dir, name);
      if (privateFileProblem(path) !== undefined) continue;
      if (!this.running(pid)) {
        this.unregister(pid);
        continue;
      }
      const read = readBoundedSync(path, { max: MAX_BYTES });
      if (!read.ok) continue;
      let entry: ShepherdEntry | undefined;
      try {
        entry = parseEntry(JSON.parse(read.data.toString("utf8")), pid);
      } catch {
        entry = undefined;
      }
      if (entry) out.push(entry);
    }
    return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.pid - b.pid);
  }
}
