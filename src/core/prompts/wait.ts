/**
 * Waiting for answers: many prompts at once, each woken within milliseconds of its result file
 * and failed within about a second of its pane or pi going away. What a wait returns final is
 * the conversation's copy of that result: it is not pushed again.
 */
import type { AgentId, PromptId } from "../../domain/ids.ts";
import { exitText, isShepherdError, ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { settle, settleFromDisk } from "./ledger.ts";
import { howEnded } from "../herd/liveness.ts";
import { seenItems, whenChanged } from "./progress.ts";
import { every } from "../herd/signals.ts";
import { bounded } from "../herd/bounded.ts";
import type { AgentRecord, Conversation, PromptRecord, WaitItem } from "../../ports/types.ts";
import { publishBlocked, readConversation, sheepView } from "./views.ts";
import { currentEdge } from "../herd/edge.ts";

export interface WaitProgress {
  done: number;
  total: number;
  /**
   * Until its result, an item shows its sheep as every live view does (sheepView): the sheep's
   * state, and `since` its prompt was submitted; elapsedMs is counted from there too.
   */
  items: { promptId: string; agentId?: string; label?: string; agent?: string; state: string; since?: string; elapsedMs: number }[];
}

export interface WaitOptions {
  timeoutSec?: number;
  signal?: AbortSignal;
  onProgress?: (p: WaitProgress) => void;
  /**
   * A wait of the core itself (a background delegation's), whose results nobody reads yet: it
   * neither holds results and questions back from the courier nor marks them delivered.
   */
  quiet?: boolean;
  /**
   * A person's wait (/shepherd wait): what it returns is shown to the person, never given to the
   * model, so a result owed to the conversation (notify) is not marked delivered and still goes
   * there once the wait lets it; a question it returns is the person's to answer.
   */
  byPerson?: boolean;
}

const FINAL = new Set(["completed", "failed", "cancelled"]);

/** Waits for every id concurrently; results come back in the order asked. */
export async function wait(herd: Herd, promptIds: readonly PromptId[], opts: WaitOptions = {}): Promise<WaitItem[]> {
  const { clock, registry } = herd;
  const timeoutSec = opts.timeoutSec ?? herd.opts.defaultWaitTimeoutSec;
  const deadline = clock.now() + timeoutSec * 1000;
  const finished = new Map<string, string>();
  const onProgress = opts.onProgress && whenChanged(opts.onProgress, (p: WaitProgress) => ({ ...p, items: seenItems(p.items, "elapsedMs") }));
  const report = () => {
    if (!onProgress) return;
    const now = clock.now();
    const items = promptIds.map((id) => {
      const p = registry.prompts.get(id);
      const a = p ? registry.agents.get(p.agentId) : undefined;
      const who = a ? { agentId: a.agentId, label: a.label, agent: a.agent } : {};
      const status = finished.get(id);
      if (status !== undefined || !a) return { promptId: id, ...who, state: status ?? "waiting", elapsedMs: 0 };
      const { state, since } = sheepView(registry, a);
      return { promptId: id, ...who, state, ...(since ? { since } : {}), elapsedMs: since ? now - Date.parse(since) : 0 };
    });
    onProgress({ done: promptIds.filter((id) => finished.has(id)).length, total: items.length, items });
  };
  // Held while the wait runs: a result or question of these goes back through this wait.
  const held = opts.quiet
    ? []
    : promptIds.flatMap((id) => {
        const p = registry.prompts.get(id);
        return p ? [id, p.agentId] : [];
      });
  for (const key of held) herd.waiting.add(key);
  report();
  // A sheep's view can change with no result of this wait (another look derives its state): a
  // look each second at the records alone; only a change goes out.
  const stopTicking = onProgress ? every(clock, 1000, report) : () => undefined;
  try {
    const items = await Promise.all(
      promptIds.map(async (id) => {
        const item = await waitOne(herd, id, deadline, opts.signal);
        finished.set(id, item.status);
        report();
        return item;
      }),
    );
    // The same id asked twice: one waiter may settle it after another gave up on the deadline.
    const final = items.map((item) => (item.status === "timeout" ? (registry.prompts.get(item.promptId)?.settled ?? item) : item));
    if (!opts.quiet && claimDelivery(herd, final, opts.byPerson === true)) await herd.persist();
    return final;
  } finally {
    stopTicking();
    for (const key of held) herd.waiting.release(key);
    // What this wait held and did not return may be pushed now.
    herd.bells.nudge();
  }
}

/**
 * Results returned final and questions returned as blocked reached whoever waited: marks them so.
 * A person's wait marks a result shown (received, but still owed to the conversation where it was).
 * True when a mark is new.
 */
function claimDelivery(herd: Herd, items: readonly WaitItem[], byPerson: boolean): boolean {
  let marked = false;
  for (const item of items) {
    if (item.question) herd.claimedQuestions.add(item.question.messageId);
    const p = herd.registry.prompts.get(item.promptId);
    if (!p || !FINAL.has(item.status)) continue;
    if (byPerson) marked = markShown(herd, p) || marked;
    else if (!p.delivered) {
      p.delivered = { by: "wait", at: new Date(herd.clock.now()).toISOString() };
      marked = true;
    }
  }
  return marked;
}

/** A settled answer was shown outside the conversation's push (a person's wait, a read): received. True when the mark is new. */
export function markShown(herd: Herd, p: PromptRecord): boolean {
  if (!p.settled || p.shown) return false;
  p.shown = { edge: currentEdge(), at: new Date(herd.clock.now()).toISOString() };
  return true;
}

async function waitOne(herd: Herd, promptId: string, deadline: number, signal?: AbortSignal): Promise<WaitItem> {
  const found = herd.registry.prompt(promptId);
  if ("missing" in found) return { promptId, agentId: "", status: "failed", error: found.missing };
  const prompt = found;
  const rec = herd.registry.agents.get(prompt.agentId);
  let rang = true;
  let quiet = 0;
  for (;;) {
    if (prompt.settled) return prompt.settled;
    // The sheep's files ring its bell when they change: after a quiet interval only the pane can
    // have gone, and the one batched multiplexer answer says so. Now and then the files are read
    // all the same, for a watch event the file system missed and for the pid witness.
    const timeout: WaitItem = { promptId, agentId: prompt.agentId, status: "timeout", error: "[timeout] still working; wait again with the same promptId." };
    // A look is bounded by this wait's deadline and signal, not only the sleep between looks: a
    // host that stopped answering holds a look until its call's own deadline.
    const looked = async () => {
      if (rang || ++quiet >= RECHECK_TICKS || !(await stillAlive(herd, rec))) {
        quiet = 0;
        return await lookUnlessUnreachable(herd, prompt, rec);
      }
      return undefined;
    };
    let step: { value: WaitItem | undefined } | undefined;
    try {
      step = await bounded(looked(), herd.clock, deadline, signal);
    } catch {
      throw new ShepherdError("aborted", "the wait was cancelled; the prompts are still pending, so wait for them again later.");
    }
    if (!step) return prompt.settled ?? timeout;
    if (step.value) return step.value;
    const left = deadline - herd.clock.now();
    if (left <= 0) return timeout;
    try {
      rang = await herd.bells.next([prompt.agentId], Math.min(left, herd.opts.livenessIntervalMs), herd.clock, signal);
    } catch {
      throw new ShepherdError("aborted", "the wait was cancelled; the prompts are still pending, so wait for them again later.");
    }
  }
}

/**
 * A look, or nothing new while the sheep's host does not answer: its sheep keeps working there,
 * and the wait goes on to its own deadline (the host's reconnect rings the sheep's bell).
 */
async function lookUnlessUnreachable(herd: Herd, prompt: PromptRecord, rec: AgentRecord | undefined): Promise<WaitItem | undefined> {
  try {
    return await look(herd, prompt, rec);
  } catch (e) {
    if (isShepherdError(e, "host_unreachable")) return undefined;
    throw e;
  }
}

/** Quiet intervals after which a waiter (or the courier) reads the sheep's files though no bell rang. */
export const RECHECK_TICKS = 5;

/**
 * The multiplexer (one batched answer a second for every waiter) says the sheep's pane and pi are
 * there. A multiplexer that has not answered within an interval says nothing: then the waiter looks
 * at the sheep's files itself.
 */
export async function stillAlive(herd: Herd, rec: AgentRecord | undefined): Promise<boolean> {
  if (!rec || rec.state === "closed") return false;
  return (await herd.liveness.within(rec, herd.opts.livenessIntervalMs))?.state === "alive";
}

/**
 * One look at a prompt: its final result (settling it from the sheep's files, or failing it when
 * the sheep is gone), blocked while the sheep waits on someone, or undefined while it works.
 * Shared by wait and by the courier that pushes results nobody waits for.
 */
export async function look(herd: Herd, prompt: PromptRecord, rec: AgentRecord | undefined): Promise<WaitItem | undefined> {
  if (prompt.settled) return prompt.settled;
  if (!rec || rec.state === "closed") {
    return settle(herd, prompt, { status: "cancelled", error: "[cancelled] the sheep was closed." });
  }
  const snap = await settleFromDisk(herd, rec, prompt);
  if (prompt.settled) return prompt.settled;
  // How pi ended comes from its exit report where the multiplexer cannot say, else from the
  // multiplexer, which keeps the pane (and pi's last words) after pi is gone.
  // Each question to the multiplexer waits an interval at most: a hung one leaves the pid witness to speak.
  const patience = herd.opts.livenessIntervalMs;
  const live =
    snap.exited && !snap.exited.inferred ? undefined : await herd.liveness.unlessStale(rec, snap, await herd.liveness.within(rec, patience), patience);
  const exit = howEnded(snap, live);
  if (exit || live?.state === "gone") {
    // The result may have landed just before pi or its pane went: look once more.
    await settleFromDisk(herd, rec, prompt);
    if (prompt.settled) return prompt.settled;
    // The close that took the pane settles what it owed (cancelled) and rings when done.
    if (herd.closing.has(rec.agentId)) return undefined;
    herd.setState(rec, "exited");
    return settle(
      herd,
      prompt,
      exit
        ? { status: "failed", error: `[pi_exited] pi in sheep ${rec.agentId} exited (${exitText(exit)}) before answering.` }
        : { status: "failed", error: `[pane_gone] the pane of sheep ${rec.agentId} (${rec.label}) is gone.` },
    );
  }
  // Another waiter on the same prompt may have settled it during the awaits above.
  if (prompt.settled) return prompt.settled;
  // Only the turn that runs can wait on someone; a follow-up queued behind it is still just queued.
  if (snap.blocked !== undefined && rec.activePromptId === prompt.promptId) {
    publishBlocked(herd, rec, prompt.promptId, snap.blocked);
    return {
      promptId: prompt.promptId,
      agentId: rec.agentId,
      status: "blocked",
      error: snap.blocked || "blocked",
      ...(snap.asking ? { question: snap.asking } : {}),
    };
  }
  return undefined;
}

/** The last turns of a sheep's conversation; whoever reads them saw the answers in them: the newest `turns` settled prompts count as received. */
export async function readConversationSeen(herd: Herd, agentId: AgentId, turns: number): Promise<Conversation> {
  const conversation = await readConversation(herd, agentId, turns);
  if (conversation.turns?.length) {
    const settled = [...herd.registry.prompts.values()].filter((p) => p.agentId === agentId && p.settled);
    let marked = false;
    for (const p of settled.slice(-Math.min(turns, conversation.turns.length))) marked = markShown(herd, p) || marked;
    if (marked) await herd.persist();
  }
  return conversation;
}
