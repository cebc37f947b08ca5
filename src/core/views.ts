/** What a sheep is doing, as asked by status, herd, read and the widget. Changes no pane. */
import type { SheepSnapshot } from "../ports/sheep-host.js";
import type { Courier } from "./courier.js";
import { exitText, ShepherdError } from "./errors.js";
import type { Herd } from "./herd.js";
import { activePrompt, pendingPrompts, refresh } from "./ledger.js";
import { howEnded } from "./liveness.js";
import { findRecord } from "./persistence.js";
import type { AgentRecord, AgentStatus } from "./types.js";

/** A sheep as the widget shows it. */
export interface HerdView extends AgentStatus {
  promptSubmittedAt?: string;
  /** Results of this sheep owed to the conversation and not yet delivered (notify, background). */
  undelivered?: number;
  /** Its latest progress message. */
  progress?: string;
  /** The question it waits to have answered. */
  asking?: { messageId: string; text: string };
}

/**
 * Asks the multiplexer (liveness, and its own agent status where it has one) and the files; once
 * pi ended, how it ended is the runtime status.
 */
export async function status(herd: Herd, agentId: unknown): Promise<AgentStatus> {
  const rec = await findRecord(herd, agentId);
  let paneAlive = false;
  let runtimeStatus: string | undefined;
  if (rec.state !== "closed") {
    // A pane whose pi ended stays on screen, but nothing lives in it; a multiplexer that could
    // not answer is no news.
    const asked = await herd.liveness.fresh(rec);
    const snap = await refresh(herd, rec);
    const live = await herd.liveness.unlessStale(rec, snap, asked);
    paneAlive = live === undefined || live.state === "alive";
    deriveState(herd, rec, snap, paneAlive);
    const exit = howEnded(snap, live);
    const { runtime } = herd.opts;
    if (exit) runtimeStatus = `pi exited (${exitText(exit)})`;
    else if (paneAlive && runtime.agentStatus) {
      runtimeStatus = await runtime.agentStatus(rec.paneId).catch(() => undefined);
    }
  }
  return describe(herd, rec, paneAlive, runtimeStatus);
}

/** The status of every sheep that is not closed; asks the multiplexer about each. */
export async function herdStatus(herd: Herd): Promise<AgentStatus[]> {
  const live = [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  return Promise.all(live.map((a) => status(herd, a.agentId)));
}

/**
 * The herd as the records and the sheep's files say, without asking the multiplexer: cheap
 * enough to refresh a widget every second. Reading the files settles any result that landed,
 * and that is written through like every other settlement.
 */
export async function herdFromFiles(herd: Herd, courier?: Courier): Promise<HerdView[]> {
  const live = [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  return Promise.all(
    live.map(async (rec) => {
      // A dialog in the sheep opens and closes with no tool call to notice it: the sheep's report
      // decides between working, blocked and idle here too.
      const snap = await refresh(herd, rec).catch(() => undefined);
      if (snap) deriveState(herd, rec, snap, rec.state !== "exited");
      const pending = activePrompt(herd, rec);
      let undelivered = 0;
      if (courier) for (const p of herd.registry.prompts.values()) if (p.agentId === rec.agentId && courier.undelivered(p)) undelivered++;
      const progress = courier?.lastProgress.get(rec.agentId);
      return {
        ...describe(herd, rec, rec.state !== "exited"),
        ...(pending ? { promptSubmittedAt: pending.submittedAt } : {}),
        ...(undelivered ? { undelivered } : {}),
        ...(progress ? { progress: progress.text } : {}),
        ...(snap?.asking ? { asking: snap.asking } : {}),
      };
    }),
  );
}

export async function readScreen(herd: Herd, agentId: unknown, lines: number): Promise<string> {
  const rec = await findRecord(herd, agentId);
  if (rec.state === "closed") throw new ShepherdError("agent_closed", `sheep ${rec.agentId} is closed; its pane is gone.`);
  return herd.opts.runtime.read(rec.paneId, lines);
}

function deriveState(herd: Herd, rec: AgentRecord, snap: SheepSnapshot, paneAlive: boolean): void {
  if (rec.state === "closed") return;
  if (!paneAlive || snap.exited || snap.piGone) {
    rec.state = "exited";
    return;
  }
  if (rec.state === "starting") return;
  if (snap.blocked !== undefined) {
    rec.state = "blocked";
    return;
  }
  rec.state = activePrompt(herd, rec) ? "working" : "idle";
}

function describe(herd: Herd, rec: AgentRecord, paneAlive: boolean, runtimeStatus?: string): AgentStatus {
  const active = activePrompt(herd, rec);
  const queued = pendingPrompts(herd, rec)
    .map((p) => p.promptId)
    .filter((id) => id !== active?.promptId);
  return {
    agentId: rec.agentId,
    agent: rec.agent,
    label: rec.label,
    runtime: rec.runtime,
    state: rec.state,
    ...(active ? { activePromptId: active.promptId } : {}),
    ...(queued.length ? { queued } : {}),
    paneAlive,
    ...(runtimeStatus !== undefined ? { runtimeStatus } : {}),
    createdAt: rec.createdAt,
    ...(rec.worktree ? { worktree: rec.worktree } : {}),
  };
}
