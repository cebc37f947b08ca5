/**
 * This machine's mark on each sheep it starts on a host, written before the host is asked to
 * prepare it and kept until its files there are cleaned up. A shepherd killed during a remote
 * start leaves a pane there that no record knows; the mark says this machine made it, so prune
 * closes it: a host's pane made by another machine's shepherd carries no mark here and is never
 * touched. One file `<dir>/<agentId>` holding the host's name and the starting shepherd; private.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isWellFormedId } from "../domain/ids.ts";
import { ensurePrivateDir } from "../protocol/files.ts";

export interface StartMarks {
  mark(agentId: string, host: string): Promise<void>;
  unmark(agentId: string): Promise<void>;
  /** Marked sheep by agent id → host and the shepherd (owner) that started it. */
  marked(): Promise<Map<string, { host: string; owner: string }>>;
}

/** At most this many are read in one look. */
const MAX_MARKS = 1000;

export function fileStartMarks(dir: string, owner: string): StartMarks {
  return {
    async mark(agentId, host) {
      await ensurePrivateDir(dir);
      await writeFile(join(dir, agentId), JSON.stringify({ host, owner }), { mode: 0o600 });
    },
    async unmark(agentId) {
      if (isWellFormedId(agentId, "agent")) await rm(join(dir, agentId), { force: true });
    },
    async marked() {
      const out = new Map<string, { host: string; owner: string }>();
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const id of names.slice(0, MAX_MARKS)) {
        if (!isWellFormedId(id, "agent")) continue;
        const text = await readFile(join(dir, id), "utf8").catch(() => "");
        let m: unknown;
        try {
          m = text.length <= 1000 ? JSON.parse(text) : undefined;
        } catch {
          m = undefined;
        }
        const { host, owner: by } = (m ?? {}) as { host?: unknown; owner?: unknown };
        if (typeof host === "string" && typeof by === "string") out.set(id, { host, owner: by });
      }
      return out;
    },
  };
}
