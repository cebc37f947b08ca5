/**
 * A sandboxed sheep cannot tell its multiplexer what it is doing: the multiplexer's variables and
 * socket are hidden from it. The shepherd tells it on the sheep's behalf, from the state it keeps of
 * the sheep anyway (its report, its prompts, its end). A sheep that is not sandboxed tells it
 * itself, so it is never told here: two sources for one pane would compete.
 *
 * Display only, so it must cost nothing else: one call per change of state (none per look), each
 * raced against its deadline, one sheep's slow call never holding another's, and a failure told
 * once, never thrown into the call that changed the state.
 */
import { errorText } from "../../domain/errors.ts";
import type { ReportedState, Runtime } from "../../ports/runtime.ts";
import type { AgentRecord, AgentState } from "../../ports/types.ts";
import { bounded } from "./bounded.ts";
import type { Clock } from "./clock.ts";

/** How long one report is waited for before the next change of that sheep may go. */
export const REPORT_DEADLINE_MS = 5_000;

/**
 * As the sheep's own extension reports: idle once ready, working, blocked. A starting sheep has not
 * said anything yet, and an ended one is the multiplexer's to see (its program is gone).
 */
const REPORTED: Partial<Record<AgentState, ReportedState>> = { idle: "idle", working: "working", blocked: "blocked" };

interface Lane {
  paneId: string;
  /** The latest state, to be told. */
  wanted: ReportedState;
  /** The state last handed to the multiplexer (told, failed or still on its way). */
  told?: ReportedState;
  sending: boolean;
}

export class StateReports {
  private readonly lanes = new Map<string, Lane>();
  private warned = false;

  constructor(
    private readonly runtime: Pick<Runtime, "reportState">,
    private readonly clock: Clock,
    private readonly onWarning?: (message: string) => void,
    /** A sheep being closed: its prompts settle as its pane goes, which is nothing to show. */
    private readonly ending: (agentId: string) => boolean = () => false,
  ) {}

  /** The sheep's state changed (Herd.setState): tells the multiplexer, later, when it is one to tell. */
  changed(rec: AgentRecord): void {
    if (!rec.sandboxed || !this.runtime.reportState) return;
    const state = REPORTED[rec.state];
    if (state === undefined || this.ending(rec.agentId)) {
      // Ended: nothing more goes out for it (a resumed sheep is another sheep).
      if (rec.state === "exited" || rec.state === "closed") this.lanes.delete(rec.agentId);
      return;
    }
    let lane = this.lanes.get(rec.agentId);
    if (!lane) {
      lane = { paneId: rec.paneId, wanted: state, sending: false };
      this.lanes.set(rec.agentId, lane);
    }
    lane.wanted = state;
    lane.paneId = rec.paneId;
    if (!lane.sending) void this.drain(rec, lane);
  }

  /** Resolves when no report is on its way or waiting (tests). */
  async settled(): Promise<void> {
    while ([...this.lanes.values()].some((l) => l.sending)) await new Promise((r) => setImmediate(r));
  }

  /** Sends the sheep's latest state until it is the one told; changes meanwhile collapse into the last. */
  private async drain(rec: AgentRecord, lane: Lane): Promise<void> {
    lane.sending = true;
    try {
      while (lane.told !== lane.wanted && this.lanes.get(rec.agentId) === lane) {
        const state = lane.wanted;
        lane.told = state;
        await this.send(rec, lane.paneId, state);
      }
    } finally {
      lane.sending = false;
    }
  }

  private async send(rec: AgentRecord, paneId: string, state: ReportedState): Promise<void> {
    let failure: string | undefined;
    try {
      const work = Promise.resolve().then(() => this.runtime.reportState!(paneId, state));
      const answered = await bounded(work, this.clock, this.clock.now() + REPORT_DEADLINE_MS);
      if (!answered) failure = `no answer within ${REPORT_DEADLINE_MS / 1000} s`;
    } catch (e) {
      failure = errorText(e);
    }
    if (failure === undefined || this.warned) return;
    this.warned = true;
    try {
      this.onWarning?.(
        `pi-shepherd could not show sandboxed sheep ${rec.label} (${rec.agentId}) as ${state} in the multiplexer: ${failure}. ` +
          "Its display there may lag; the shepherd's status is unaffected. (Told once per session.)",
      );
    } catch {
      // a warning must never change what happens
    }
  }
}
