/** What a sheep is doing, as asked by status, herd, read and the widget. Changes no pane. */
import type { AgentId } from "../../domain/ids.ts";
import type { SheepSnapshot } from "../../ports/sheep-files.ts";
import { exitText, isShepherdError, ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { activePrompt, pendingPrompts, refresh } from "./ledger.ts";
import { howEnded } from "../herd/liveness.ts";
import { bounded } from "../herd/bounded.ts";
import { findRecord } from "../herd/owners.ts";
import type { Registry } from "../herd/registry.ts";
import type { AgentRecord, AgentStatus, Conversation, EgressReport, PromptRecord, SheepMessage, SheepView } from "../../ports/types.ts";

/** What the asynchronous herd adds to a view: the courier is one (passed in, so views sit below it). */
export interface HerdNews {
  /** Whether a result of this prompt is owed to the conversation and not yet given. */
  undelivered(p: PromptRecord): boolean;
  /** The latest progress message of each sheep. */
  readonly lastProgress: ReadonlyMap<string, SheepMessage>;
}

/**
 * A sheep as the widget shows it: the view every live view shares (its state and clock), and
 * what the asynchronous herd adds.
 */
export interface HerdView extends SheepView {
  /** It works in a worktree of its own: its edits are not in the person's checkout. */
  worktree?: boolean;
  /** Prompts queued behind the active one (follow-ups). */
  queued?: number;
  /** Results of this sheep owed to the conversation and not yet delivered (notify, background). */
  undelivered?: number;
  /** Its latest progress message. */
  progress?: string;
  /** Its pi runs in bubblewrap. */
  sandboxed?: true;
  /** The question it waits to have answered (known from its files: as of the last refresh). */
  asking?: { messageId: string; text: string };
}

/**
 * How long status waits for a sheep's machine before it shows the sheep as last known: a host
 * whose agent stopped answering must not hold a status, or a herd of every machine's sheep.
 */
export const STATUS_LOOK_MS = 5_000;

/**
 * Asks the multiplexer (liveness, and its own agent status where it has one) and the files; once
 * pi ended, how it ended is the runtime status. The look is bounded by STATUS_LOOK_MS and the
 * caller's signal: a machine that does not answer in time leaves the record as it was.
 */
export async function status(herd: Herd, agentId: AgentId, signal?: AbortSignal, asked?: Promise<void>): Promise<AgentStatus> {
  const rec = await findRecord(herd, agentId);
  if (rec.state === "closed") return describe(herd, rec, false);
  let answered: { value: { paneAlive: boolean; runtimeStatus?: string } } | undefined;
  try {
    answered = await bounded(lookAt(herd, rec, asked), herd.clock, herd.clock.now() + STATUS_LOOK_MS, signal);
  } catch (e) {
    if (signal?.aborted) throw new ShepherdError("aborted", "the status was cancelled.");
    throw e;
  }
  if (answered) return describe(herd, rec, answered.value.paneAlive, answered.value.runtimeStatus);
  return describe(herd, rec, rec.state !== "exited", `its machine did not answer within ${STATUS_LOOK_MS / 1000} s: shown as last known`);
}

/** `herdAsked`: the herd's one fresh question (LivenessMonitor.freshAll), whose answer this look takes. */
async function lookAt(herd: Herd, rec: AgentRecord, herdAsked?: Promise<void>): Promise<{ paneAlive: boolean; runtimeStatus?: string }> {
  // A pane whose pi ended stays on screen, but nothing lives in it; a multiplexer that could
  // not answer is no news.
  const asked = herdAsked ? await herdAsked.then(() => herd.liveness.kept(rec.agentId)) : await herd.liveness.fresh(rec);
  // A host that does not answer now says nothing new: the record is shown as it was (and the
  // tool says since when the host is unreachable).
  const snap = await refresh(herd, rec).catch((e: unknown) => {
    if (isShepherdError(e, "host_unreachable")) return undefined;
    throw e;
  });
  if (!snap) return { paneAlive: rec.state !== "exited" };
  const live = await herd.liveness.unlessStale(rec, snap, asked);
  const paneAlive = live === undefined || live.state === "alive";
  deriveState(herd, rec, snap, paneAlive);
  const exit = howEnded(snap, live);
  const { runtime } = herd.opts;
  if (exit) return { paneAlive, runtimeStatus: `pi exited (${exitText(exit)})` };
  if (paneAlive && runtime.agentStatus) {
    const runtimeStatus = await runtime.agentStatus(rec.paneId).catch(() => undefined);
    return { paneAlive, ...(runtimeStatus !== undefined ? { runtimeStatus } : {}) };
  }
  return { paneAlive };
}

/**
 * The status of every sheep that is not closed; asks each sheep's machine, all at once, each
 * bounded: one multiplexer question per machine for the whole herd.
 */
export async function herdStatus(herd: Herd, signal?: AbortSignal): Promise<AgentStatus[]> {
  const live = [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  const asked = herd.liveness.freshAll(live);
  return Promise.all(live.map((a) => status(herd, a.agentId, signal, asked.get(a.agentId) ?? Promise.resolve())));
}

/**
 * Brings the records up to date from the sheep's files alone, without asking the multiplexer:
 * every sheep's, or only those named in `only` (whose files changed). Reading the files settles
 * any result that landed, and that is written through like every other settlement. Returns
 * every live sheep; a question is known only of the sheep read.
 */
export async function refreshFromFiles(herd: Herd, courier?: HerdNews, only?: ReadonlySet<string>): Promise<HerdView[]> {
  const live = [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  const asking = new Map<string, { messageId: string; text: string }>();
  await Promise.all(
    live.map(async (rec) => {
      if (only && !only.has(rec.agentId)) return;
      // A dialog in the sheep opens and closes with no tool call to notice it: the sheep's report
      // decides between working, blocked and idle here too.
      const snap = await refresh(herd, rec).catch(() => undefined);
      if (snap) deriveState(herd, rec, snap, rec.state !== "exited");
      if (snap?.asking) asking.set(rec.agentId, snap.asking);
    }),
  );
  // The sheep refreshed here that are still ours: one recorded meanwhile is shown next time.
  const owed = undeliveredBySheep(herd, courier);
  return live
    .filter((rec) => herd.registry.agents.get(rec.agentId) === rec && rec.state !== "closed")
    .map((rec) => {
      const question = asking.get(rec.agentId);
      return { ...herdView(herd, rec, courier, owed), ...(question ? { asking: question } : {}) };
    });
}

/**
 * Results owed to the conversation, per sheep, in one pass over the prompts: a view of the herd
 * that scanned every prompt for each sheep would cost sheep × prompts each time the widget draws.
 */
function undeliveredBySheep(herd: Herd, courier?: HerdNews): ReadonlyMap<string, number> {
  const owed = new Map<string, number>();
  if (courier) for (const p of herd.registry.prompts.values()) if (courier.undelivered(p)) owed.set(p.agentId, (owed.get(p.agentId) ?? 0) + 1);
  return owed;
}

/** A sheep for the widget from the records and the courier alone (no file, no multiplexer). */
function herdView(herd: Herd, rec: AgentRecord, courier: HerdNews | undefined, owed: ReadonlyMap<string, number>): HerdView {
  const active = activePrompt(herd, rec);
  const queued = pendingPrompts(herd, rec).filter((p) => p !== active).length;
  const undelivered = owed.get(rec.agentId) ?? 0;
  // Progress tells of a prompt in flight: once that prompt settled it is stale, and not shown.
  const latest = courier?.lastProgress.get(rec.agentId);
  const of = latest?.promptId !== undefined ? herd.registry.prompts.get(latest.promptId) : active;
  const progress = of && !of.settled ? latest : undefined;
  return {
    ...sheepView(herd.registry, rec),
    ...(rec.worktree ? { worktree: true } : {}),
    ...(rec.sandboxed ? { sandboxed: true as const } : {}),
    ...(queued ? { queued } : {}),
    ...(undelivered ? { undelivered } : {}),
    ...(progress ? { progress: progress.text } : {}),
  };
}

/** What every live view shows of one sheep, from the records alone (no file, no multiplexer). */
export function sheepView(registry: Registry, rec: AgentRecord): SheepView {
  const base = {
    agentId: rec.agentId,
    agent: rec.agent,
    label: rec.label,
    ...(rec.host !== undefined ? { host: rec.host } : {}),
    state: rec.state,
    ...(rec.spent ? { spent: rec.spent } : {}),
    ...(rec.budget ? { budget: rec.budget } : {}),
  };
  if (rec.state === "starting") return { ...base, since: rec.createdAt };
  // Blocked has no clock: when the sheep began to wait on a person is not known, only its prompt's age.
  const pending = rec.state === "working" ? registry.pending(rec) : undefined;
  return pending ? { ...base, since: pending.submittedAt } : base;
}

/** Every sheep that is not closed, as the widget shows them (a question asked as of the last refresh left out). */
export function herdViews(herd: Herd, courier?: HerdNews): HerdView[] {
  const owed = undeliveredBySheep(herd, courier);
  return [...herd.registry.agents.values()].filter((a) => a.state !== "closed").map((a) => herdView(herd, a, courier, owed));
}

export async function readScreen(herd: Herd, agentId: AgentId, lines: number): Promise<string> {
  const rec = await findRecord(herd, agentId);
  if (rec.state === "closed") throw new ShepherdError("agent_closed", `sheep ${rec.agentId} is closed; its pane is gone.`);
  return herd.opts.runtime.read(rec.paneId, lines);
}

/** The sheep's last turns from its session file; a closed sheep's file is kept, so it still answers. */
export async function readConversation(herd: Herd, agentId: AgentId, turns: number): Promise<Conversation> {
  const rec = await findRecord(herd, agentId);
  return herd.opts.files.conversation(rec.agentId, turns);
}

/**
 * What a sandboxed sheep tried to reach, from its egress log on the machine it runs on (kept after
 * it closed); undefined for a sheep with no log yet. A sheep that is not sandboxed has none: a file
 * of that name in its directory is its own writing, never read.
 */
export async function readEgress(herd: Herd, agentId: AgentId, entries: number): Promise<EgressReport | undefined> {
  const rec = await findRecord(herd, agentId);
  return rec.sandboxed ? herd.opts.files.egress?.(rec.agentId, entries) : undefined;
}

/** A sheep waits on a dialog: one notice per dialog text and prompt. */
export function publishBlocked(herd: Herd, rec: AgentRecord, promptId: string | undefined, dialog: string): void {
  herd.publish(rec, {
    kind: "blocked",
    key: `blocked:${rec.agentId}:${promptId ?? "idle"}:${dialog.slice(0, 200)}`,
    ...(promptId ? { promptId } : {}),
    // The notice already says it waits on a dialog: the event's words are the dialog's own.
    text: dialog || "(the dialog has no title)",
  });
}

function deriveState(herd: Herd, rec: AgentRecord, snap: SheepSnapshot, paneAlive: boolean): void {
  if (rec.state === "closed") return;
  // The sheep's running total as it reported it after its last response: seen while its turn runs.
  herd.spend.note(rec, snap.spent);
  if (!paneAlive || snap.exited || snap.piGone) {
    // A close ends its own sheep: only a sheep that ended by itself is news.
    if (rec.state !== "exited" && !herd.closing.has(rec.agentId)) {
      herd.publish(rec, { kind: "failed", key: `exited:${rec.agentId}`, text: snap.exited ? `pi ended (${exitText(snap.exited)})` : "its pane or pi is gone" });
    }
    herd.setState(rec, "exited");
    return;
  }
  if (rec.state === "starting") return;
  if (snap.blocked !== undefined) {
    publishBlocked(herd, rec, rec.activePromptId, snap.blocked);
    herd.setState(rec, "blocked");
    return;
  }
  herd.setState(rec, activePrompt(herd, rec) ? "working" : "idle");
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
    ...(rec.host !== undefined ? { host: rec.host } : {}),
    state: rec.state,
    ...(active ? { activePromptId: active.promptId } : {}),
    ...(queued.length ? { queued } : {}),
    paneAlive,
    ...(runtimeStatus !== undefined ? { runtimeStatus } : {}),
    createdAt: rec.createdAt,
    ...(rec.worktree ? { worktree: rec.worktree } : {}),
    ...(rec.sandboxed ? { sandboxed: true as const } : {}),
    ...(rec.spent ? { spent: rec.spent } : {}),
    ...(rec.budget ? { budget: rec.budget } : {}),
  };
}
