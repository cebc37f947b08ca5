import { readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { AgentRecord } from "../ports/types.ts";
import type { StateStore, StoredState } from "../ports/store.ts";
import { ensurePrivateDir, writeJsonAtomic } from "../protocol/files.ts";
import { withFileLock } from "./state-lock.ts";
import { checkRecords, rejectionSummary, type RejectedRecord } from "./state-records.ts";
import { withinBounds } from "./state-retention.ts";
import { boundedTexts } from "./state-texts.ts";
import { checkTallies } from "./state-tallies.ts";
import { MAX_TALLIES_KEPT } from "../domain/bounds.ts";

interface StateFile extends StoredState {
  version: 1;
}

export interface FileStateStoreOptions {
  /**
   * Told when something needs the user's eye outside a load: once when writes start failing (and
   * again only after one succeeded), and when a save found records it had to set aside.
   */
  onWarning?: (message: string) => void;
}

const EMPTY = (): StoredState => ({ agents: [], prompts: [] });

/**
 * `<stateDir>/state.json`, shared by every shepherd on one agent dir. Writers hold `state.lock`
 * and merge, so two shepherds never drop each other's records.
 */
export class FileStateStore implements StateStore {
  private readonly file: string;
  private readonly lock: string;
  /**
   * Each owner's latest records not yet on disk. A burst of changes costs one write, and records
   * a failed write could not store stay here for the next save to carry.
   */
  private readonly pending = new Map<string, StoredState>();
  /** The write that will take the pending records; saves made meanwhile wait for it. */
  private scheduled: Promise<void> | undefined;
  /** Settles after the last scheduled write, whatever its outcome: one failure never blocks the next. */
  private tail: Promise<void> = Promise.resolve();
  private failing = false;
  private readonly unwritable = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly options: FileStateStoreOptions = {},
  ) {
    this.file = join(dir, "state.json");
    this.lock = join(dir, "state.lock");
  }

  async load(): Promise<{ state: StoredState; warnings: string[] }> {
    await ensurePrivateDir(this.dir);
    return this.withLock(() => this.read());
  }

  /** Rejects when the write that carried these records failed; the next save retries them. */
  save(owner: string, mine: StoredState): Promise<void> {
    this.pending.set(owner, mine);
    if (!this.scheduled) {
      const write = this.tail.then(() => this.writePending());
      this.scheduled = write;
      this.tail = write.catch(() => undefined);
    }
    return this.scheduled;
  }

  private async writePending(): Promise<void> {
    this.scheduled = undefined;
    const jobs = new Map(this.pending);
    this.pending.clear();
    try {
      await ensurePrivateDir(this.dir);
      await this.withLock(async () => {
        const { state, warnings } = await this.read();
        for (const w of warnings) this.options.onWarning?.(w);
        let merged = state;
        for (const [owner, mine] of jobs) merged = mergeOwner(merged, owner, mine);
        const bounded = withinBounds(merged.agents, merged.prompts, merged.delegations ?? []);
        // Bounded in bytes too: one sheep's huge answers never make the file too big to write for everyone.
        const texts = boundedTexts(bounded.prompts, bounded.delegations);
        // Only what a load accepts is written: a record every load set aside would be set aside again after every save.
        const checked = checkRecords(bounded.agents, texts.prompts, texts.delegations);
        this.warnUnwritable(checked.rejected);
        const tallies = (merged.tallies ?? []).slice(-MAX_TALLIES_KEPT);
        const out: StateFile = {
          version: 1,
          agents: checked.agents,
          prompts: checked.prompts,
          delegations: checked.delegations,
          ...(tallies.length > 0 ? { tallies } : {}),
        };
        await writeJsonAtomic(this.file, out);
      });
      this.failing = false;
    } catch (e) {
      for (const [owner, mine] of jobs) if (!this.pending.has(owner)) this.pending.set(owner, mine);
      if (!this.failing) {
        this.failing = true;
        this.options.onWarning?.(
          `pi-shepherd: could not write ${this.file} (${(e as Error).message}); will retry on the next change, and the records stay in memory meanwhile.`,
        );
      }
      throw e;
    }
  }

  /** Once per record: the core saves the same records after every change. */
  private warnUnwritable(rejected: readonly RejectedRecord[]): void {
    const fresh = rejected.filter((r) => {
      const id = (r.record as Record<string, unknown> | null)?.[`${r.kind}Id`];
      const key = `${r.kind}:${String(id)}`;
      if (this.unwritable.has(key)) return false;
      this.unwritable.add(key);
      return true;
    });
    if (fresh.length === 0) return;
    this.options.onWarning?.(
      `pi-shepherd: did not write ${fresh.length} record${fresh.length === 1 ? "" : "s"} to ${this.file} that a later load would refuse (${rejectionSummary(fresh)}); they live in memory only and will not survive a restart.`,
    );
  }

  private async read(): Promise<{ state: StoredState; warnings: string[] }> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { state: EMPTY(), warnings: [] };
      throw e;
    }
    let data: Partial<StateFile>;
    try {
      data = JSON.parse(text) as Partial<StateFile>;
      if (data.version !== 1 || !Array.isArray(data.agents) || !Array.isArray(data.prompts)) throw new Error("unexpected shape");
    } catch (e) {
      // Never fail to start over a bad file; keep it for the user to look at.
      const aside = `${this.file}.corrupt-${Date.now()}`;
      await rename(this.file, aside).catch(() => undefined);
      return {
        state: EMPTY(),
        warnings: [`pi-shepherd: ${this.file} could not be read (${(e as Error).message}); moved it to ${aside} and started with no records.`],
      };
    }
    // Files from before background delegations have none.
    const delegations = Array.isArray(data.delegations) ? data.delegations : [];
    const checked = checkRecords(data.agents, data.prompts, delegations);
    // A tally not of its shape is left out (the next write drops it): it must never inflate or break the totals.
    const { tallies, rejected: badTallies } = checkTallies(data.tallies);
    const state: StoredState = {
      agents: checked.agents,
      prompts: checked.prompts,
      delegations: checked.delegations,
      ...(tallies.length > 0 ? { tallies } : {}),
    };
    const tallyWarnings =
      badTallies > 0
        ? [
            `pi-shepherd: left out ${badTallies} spend tall${badTallies === 1 ? "y" : "ies"} of ${this.file} that failed validation; the totals do not count them.`,
          ]
        : [];
    if (checked.rejected.length === 0) return { state, warnings: tallyWarnings };
    // Kept for the user, and gone from state.json, so later loads neither use nor report them again.
    const aside = join(this.dir, `state.rejected-${Date.now()}.json`);
    await writeJsonAtomic(aside, { version: 1, from: this.file, rejected: checked.rejected });
    await writeJsonAtomic(this.file, { version: 1, ...state } satisfies StateFile);
    const n = checked.rejected.length;
    return {
      state,
      warnings: [
        ...tallyWarnings,
        `pi-shepherd: set aside ${n} record${n === 1 ? "" : "s"} of ${this.file} that failed validation (${rejectionSummary(checked.rejected)}); they are not used and were moved to ${aside}.`,
      ],
    };
  }

  private withLock<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(this.file, this.lock, fn);
  }
}

/** Replaces the records of `owner` (and of the agents it names) with `mine`, keeping everyone else's. */
function mergeOwner(state: StoredState, owner: string, mine: StoredState): StoredState {
  const ids = new Set([...mine.agents.map((a) => a.agentId), ...(mine.forgotten ?? [])]);
  const agents = [...state.agents.filter((a) => a.owner !== owner && !ids.has(a.agentId)), ...mine.agents];
  const keep = new Set(agents.map((a) => a.agentId));
  const mineP = new Set(mine.prompts.map((p) => p.promptId));
  const prompts = [...state.prompts.filter((p) => keep.has(p.agentId) && !ids.has(p.agentId) && !mineP.has(p.promptId)), ...mine.prompts];
  const mineD = mine.delegations ?? [];
  const mineDIds = new Set(mineD.map((d) => d.delegationId));
  const delegations = [...(state.delegations ?? []).filter((d) => d.owner !== owner && !mineDIds.has(d.delegationId)), ...mineD];
  // A tally taken over by this owner goes with the records it counted for: never counted under two names.
  // A save without a tally (a shepherd that has not attached yet) keeps the one stored under its name.
  const gone = new Set([...(mine.tallies ? [owner] : []), ...(mine.forgottenTallies ?? [])]);
  const tallies = [...(state.tallies ?? []).filter((t) => !gone.has(t.owner)), ...(mine.tallies ?? []).filter((t) => t.owner === owner)];
  return { agents, prompts, delegations, tallies };
}

/**
 * state.json as it is, read without the lock and without changing anything: a corrupt file is
 * reported, not moved aside, and rejected records are counted, not set aside. The doctor's view.
 */
export async function peekState(dir: string): Promise<{ agents: AgentRecord[]; rejected: number; problem?: string }> {
  const file = join(dir, "state.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { agents: [], rejected: 0 };
    return { agents: [], rejected: 0, problem: `${file} cannot be read (${(e as Error).message})` };
  }
  try {
    const data = JSON.parse(text) as Partial<StateFile>;
    if (data.version !== 1 || !Array.isArray(data.agents) || !Array.isArray(data.prompts)) throw new Error("unexpected shape");
    const checked = checkRecords(data.agents, data.prompts);
    return { agents: checked.agents, rejected: checked.rejected.length };
  } catch (e) {
    return { agents: [], rejected: 0, problem: `${file} is not a state file (${(e as Error).message})` };
  }
}
