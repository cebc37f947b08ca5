/** What a delegation tells while it runs: each task's phase, and its sheep's live view once it has one. */
import { seenItems, whenChanged } from "../prompts/progress.ts";
import type { AgentState, DelegateMode, SheepView, WaitStatus } from "../../ports/types.ts";
import type { AgentId } from "../../domain/ids.ts";

export type ItemPhase = "queued" | "starting" | "working" | WaitStatus;

export interface DelegateProgress {
  mode: DelegateMode;
  done: number;
  total: number;
  /**
   * Once its sheep is recorded, an unfinished item shows it as every live view does (sheepView):
   * its state, and `since` when that state's clock started; elapsedSec is counted from there.
   */
  items: { agent: string; label?: string; agentId?: string; state: ItemPhase | AgentState; since?: string; elapsedSec: number }[];
}

export interface Tracked {
  agent: string;
  label?: string;
  agentId?: AgentId;
  state: ItemPhase;
}

const FINAL: ReadonlySet<ItemPhase> = new Set(["completed", "failed", "timeout", "cancelled", "blocked"]);

export class Tracking {
  readonly tracked: Tracked[];
  private readonly onProgress: ((p: DelegateProgress) => void) | undefined;

  constructor(
    private readonly mode: DelegateMode,
    agents: readonly string[],
    private readonly view: (agentId: string) => SheepView | undefined,
    private readonly now: () => number,
    onProgress: ((p: DelegateProgress) => void) | undefined,
  ) {
    this.onProgress = onProgress && whenChanged(onProgress, (p: DelegateProgress) => ({ ...p, items: seenItems(p.items, "elapsedSec") }));
    this.tracked = agents.map((agent) => ({ agent, state: "queued" }));
  }

  /** Whether anyone listens: without a listener nothing is looked at. */
  get heard(): boolean {
    return this.onProgress !== undefined;
  }

  report(): void {
    if (!this.onProgress) return;
    const now = this.now();
    const items = this.tracked.map((t) => {
      const who = { agent: t.agent, ...(t.label ? { label: t.label } : {}), ...(t.agentId ? { agentId: t.agentId } : {}) };
      const view = t.agentId && !FINAL.has(t.state) ? this.view(t.agentId) : undefined;
      if (!view) return { ...who, state: t.state, elapsedSec: 0 };
      return {
        ...who,
        state: view.state,
        ...(view.since ? { since: view.since } : {}),
        elapsedSec: view.since ? Math.floor((now - Date.parse(view.since)) / 1000) : 0,
      };
    });
    this.onProgress({ mode: this.mode, done: this.tracked.filter((t) => FINAL.has(t.state)).length, total: this.tracked.length, items });
  }
}
