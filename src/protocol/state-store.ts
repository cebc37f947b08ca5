import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { StateStore, StoredState } from "../ports/store.js";
import { ensurePrivateDir, writeJsonAtomic } from "./files.js";
import { pidAlive } from "./pid.js";

interface StateFile extends StoredState {
  version: 1;
}

const EMPTY = (): StoredState => ({ agents: [], prompts: [] });

/**
 * `<stateDir>/state.json`, shared by every shepherd on one agent dir. Writers take a lock file
 * and merge, so two shepherds never drop each other's records.
 */
export class FileStateStore implements StateStore {
  private readonly file: string;
  private readonly lock: string;
  /** Saves are applied in order, and a burst of changes costs one write. */
  private queue: Promise<void> = Promise.resolve();
  private next: { owner: string; mine: StoredState } | undefined;

  constructor(private readonly dir: string) {
    this.file = join(dir, "state.json");
    this.lock = join(dir, "state.lock");
  }

  async load(): Promise<{ state: StoredState; warnings: string[] }> {
    await ensurePrivateDir(this.dir);
    return this.withLock(() => this.read());
  }

  save(owner: string, mine: StoredState): Promise<void> {
    const first = this.next === undefined;
    this.next = { owner, mine };
    if (!first) return this.queue;
    this.queue = this.queue.then(async () => {
      const job = this.next!;
      this.next = undefined;
      await ensurePrivateDir(this.dir);
      await this.withLock(async () => {
        const { state } = await this.read();
        const ids = new Set([...job.mine.agents.map((a) => a.agentId), ...(job.mine.forgotten ?? [])]);
        const agents = [...state.agents.filter((a) => a.owner !== job.owner && !ids.has(a.agentId)), ...job.mine.agents];
        const keep = new Set(agents.map((a) => a.agentId));
        const mineP = new Set(job.mine.prompts.map((p) => p.promptId));
        const prompts = [
          ...state.prompts.filter((p) => keep.has(p.agentId) && !ids.has(p.agentId) && !mineP.has(p.promptId)),
          ...job.mine.prompts,
        ];
        const out: StateFile = { version: 1, agents, prompts };
        await writeJsonAtomic(this.file, out);
      });
    });
    return this.queue;
  }

  private async read(): Promise<{ state: StoredState; warnings: string[] }> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { state: EMPTY(), warnings: [] };
      throw e;
    }
    try {
      const data = JSON.parse(text) as Partial<StateFile>;
      if (data.version !== 1 || !Array.isArray(data.agents) || !Array.isArray(data.prompts)) throw new Error("unexpected shape");
      return { state: { agents: data.agents, prompts: data.prompts }, warnings: [] };
    } catch (e) {
      // Never fail to start over a bad file; keep it for the user to look at.
      const aside = `${this.file}.corrupt-${Date.now()}`;
      await rename(this.file, aside).catch(() => undefined);
      return { state: EMPTY(), warnings: [`pi-shepherd: ${this.file} could not be read (${(e as Error).message}); moved it to ${aside} and started with no records.`] };
    }
  }

  /** An exclusive lock file holding the holder's pid; a dead holder's lock is taken over. */
  private async withLock<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const fh = await open(this.lock, "wx", 0o600);
        await fh.writeFile(String(process.pid));
        await fh.close();
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        const holder = Number((await readFile(this.lock, "utf8").catch(() => "")).trim());
        if (!holder || !pidAlive(holder) || attempt > 200) await unlink(this.lock).catch(() => undefined);
        else await new Promise((r) => setTimeout(r, 10));
      }
    }
    try {
      return await fn();
    } finally {
      await unlink(this.lock).catch(() => undefined);
    }
  }
}
