/** What a sheep is doing, as asked by status, herd, read and the widget. Changes no pane. */
import type { SheepSnapshot } from "../ports/sheep-host.js";
import { exitText, ShepherdError } from "./errors.js";
import type { Herd } from "./herd.js";
import { activePrompt, refresh } from "./ledger.js";
import { howEnded } from "./liveness.js";
import { findRecord } from "./persistence.js";
import type { Registry } from "./registry.js";
import type { AgentRecord, AgentStatus, Conversation, SheepView } from "./types.js";

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
    const live = await herd.liveness.fresh(rec);
    paneAlive = live === undefined || live.state === "alive";
    const snap = await refresh(herd, rec);
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
 * Brings the records up to date from the sheep's files alone, without asking the multiplexer:
 * cheap enough to run every second for the widget. Reading the files settles any result that
 * landed, and that is written through like every other settlement.
 */
export async function refreshFromFiles(herd: Herd): Promise<SheepView[]> {
  const live = [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  await Promise.all(
    live.map(async (rec) => {
      // A dialog in the sheep opens and closes with no tool call to notice it: the sheep's report
      // decides between working, blocked and idle here too.
      const snap = await refresh(herd, rec).catch(() => undefined);
      if (snap) deriveState(herd, rec, snap, rec.state !== "exited");
    }),
  );
  // The sheep refreshed here that are still ours: one recorded meanwhile is shown next time.
  return live.filter((rec) => herd.registry.agents.get(rec.agentId) === rec && rec.state !== "closed").map((rec) => sheepView(herd.registry, rec));
}

/** What every live view shows of one sheep, from the records alone (no file, no multiplexer). */
export function sheepView(registry: Registry, rec: AgentRecord): SheepView {
  const base = { agentId: rec.agentId, agent: rec.agent, label: rec.label, state: rec.state };
  if (rec.state === "starting") return { ...base, since: rec.createdAt };
  // Blocked has no clock: when the sheep began to wait on a person is not known, only its prompt's age.
  const pending = rec.state === "working" ? registry.pending(rec) : undefined;
  return pending ? { ...base, since: pending.submittedAt } : base;
}

/** Every sheep that is not closed, as the live views show them. */
export function herdViews(registry: Registry): SheepView[] {
  return [...registry.agents.values()].filter((a) => a.state !== "closed").map((a) => sheepView(registry, a));
}

export async function readScreen(herd: Herd, agentId: unknown, lines: number): Promise<string> {
  const rec = await findRecord(herd, agentId);
  if (rec.state === "closed") throw new ShepherdError("agent_closed", `sheep ${rec.agentId} is closed; its pane is gone.`);
  return herd.opts.runtime.read(rec.paneId, lines);
}

/** The sheep's last turns from its session file; a closed sheep's file is kept, so it still answers. */
export async function readConversation(herd: Herd, agentId: unknown, turns: number): Promise<Conversation> {
  const rec = await findRecord(herd, agentId);
  return herd.opts.host.conversation(rec.agentId, turns);
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
  return {
    agentId: rec.agentId,
    agent: rec.agent,
    label: rec.label,
    runtime: rec.runtime,
    state: rec.state,
    ...(active ? { activePromptId: active.promptId } : {}),
    paneAlive,
    ...(runtimeStatus !== undefined ? { runtimeStatus } : {}),
    createdAt: rec.createdAt,
  };
}
