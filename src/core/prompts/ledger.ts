/**
 * The ledger of prompts: each settles exactly once, from the sheep's result file or from what
 * the core saw happen, and the first outcome is the one every later wait returns. A settled
 * active prompt hands its place to the next follow-up queued behind it.
 */
import type { AgentId } from "../../domain/ids.ts";
import type { SheepResult, SheepSnapshot } from "../../ports/sheep-files.ts";
import { shorten } from "../../domain/errors.ts";
import { evidenceOf, nextBaseline } from "./evidence.ts";
import { sheepSpendText } from "../herd/spend.ts";
import type { Herd } from "../herd/herd.ts";
import { type AgentRecord, personEdge, type PromptRecord, type WaitItem } from "../../ports/types.ts";

export type Outcome = Omit<WaitItem, "promptId" | "agentId">;

/**
 * Settles the prompt with its evidence. Evidence takes a moment (git snapshots the working tree),
 * so whoever asks meanwhile (a wait, a close, the widget) gets the same outcome: the first one.
 */
export function settle(herd: Herd, prompt: PromptRecord, outcome: Outcome): Promise<WaitItem> {
  if (prompt.settled) return Promise.resolve(prompt.settled);
  const going = herd.settling.get(prompt.promptId);
  if (going) return going;
  const done = (async () => {
    const evidence = await evidenceOf(herd, prompt);
    prompt.settled = { promptId: prompt.promptId, agentId: prompt.agentId, ...outcome, ...evidence };
    const rec = herd.registry.agents.get(prompt.agentId);
    herd.audit({
      event: "result",
      // The answer to a prompt belongs to the edge that sent it, whoever looked first.
      ...(prompt.edge !== undefined ? { edge: prompt.edge } : {}),
      agentId: prompt.agentId,
      ...(rec ? { label: rec.label } : {}),
      promptId: prompt.promptId,
      status: outcome.status,
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      ...(outcome.usage !== undefined ? { usage: outcome.usage } : {}),
      ...(outcome.error !== undefined ? { error: shorten(outcome.error) } : {}),
    });
    if (rec) advance(herd, rec, prompt);
    // A failure is the person's news whoever sent the prompt; a timeout or cancel was somebody's choice.
    if (outcome.status === "failed")
      herd.publish(rec, { kind: "failed", key: `failed:${prompt.promptId}`, promptId: prompt.promptId, text: outcome.error ?? "the prompt failed" });
    intoDelegation(herd, prompt);
    herd.bells.ring(prompt.agentId);
    void herd.persist();
    return prompt.settled;
  })().finally(() => herd.settling.delete(prompt.promptId));
  herd.settling.set(prompt.promptId, done);
  return done;
}

/**
 * The next queued follow-up becomes the sheep's active prompt; the sheep takes them in the same
 * order. Its evidence starts where the settled prompt's ended.
 */
function advance(herd: Herd, rec: AgentRecord, settled: PromptRecord): void {
  const { promptId } = settled;
  if (rec.queue?.includes(promptId)) rec.queue = rec.queue.filter((id) => id !== promptId);
  if (rec.activePromptId === promptId) {
    const next = rec.queue?.shift();
    if (next) {
      rec.activePromptId = next;
      if (rec.state === "idle" || rec.state === "blocked") herd.setState(rec, "working");
      const queued = herd.registry.prompts.get(next);
      if (queued) {
        nextBaseline(settled, queued);
        // The sheep takes it now; its result's own time replaces this once it answers.
        queued.startedAt = new Date(herd.clock.now()).toISOString();
      }
    } else if (rec.state === "working") herd.setState(rec, "idle");
  }
  if (rec.queue?.length === 0) delete rec.queue;
}

/** A background delegation keeps each task's outcome itself: its prompt may be forgotten before the message goes out. */
function intoDelegation(herd: Herd, prompt: PromptRecord): void {
  if (!prompt.delegationId || !prompt.settled) return;
  const item = herd.registry.delegations.get(prompt.delegationId)?.items.find((i) => i.promptId === prompt.promptId);
  if (!item || item.status !== undefined) return;
  const s = prompt.settled;
  item.status = s.status;
  if (s.text !== undefined) item.text = s.text;
  if (s.error !== undefined) item.error = s.error;
  if (s.usage !== undefined) item.usage = s.usage;
  if (s.evidence !== undefined) item.evidence = s.evidence;
  if (s.evidenceError !== undefined) item.evidenceError = s.evidenceError;
}

/** Settles the prompt when its result file is there; returns the sheep's latest report. */
export async function settleFromDisk(herd: Herd, rec: AgentRecord, prompt: PromptRecord): Promise<SheepSnapshot> {
  const result = await herd.opts.files.result(rec.agentId, prompt.promptId);
  if (result) await settleResult(herd, rec, prompt, result);
  return herd.opts.files.snapshot(rec.agentId);
}

/**
 * Reads the sheep's files once: settles its active prompt if answered, then each follow-up the
 * sheep answered after it, and returns its report.
 */
export async function refresh(herd: Herd, rec: AgentRecord): Promise<SheepSnapshot> {
  for (;;) {
    const active = activePrompt(herd, rec);
    const result = active ? await herd.opts.files.result(rec.agentId, active.promptId) : undefined;
    if (!active || !result) return herd.opts.files.snapshot(rec.agentId);
    await settleResult(herd, rec, active, result);
  }
}

/** A result from the sheep's files: its spend is kept before the prompt settles (so the write of the settlement holds it). */
async function settleResult(herd: Herd, rec: AgentRecord, prompt: PromptRecord, result: SheepResult): Promise<WaitItem> {
  if (!prompt.settled && !herd.settling.has(prompt.promptId)) {
    herd.spend.note(rec, result.spent);
    if (result.budgetExceeded) herd.spend.exceeded(rec);
  }
  return settle(herd, prompt, fromResult(result, prompt, rec));
}

/** The sheep's unsettled active prompt, if it has one. */
export function activePrompt(herd: Herd, rec: AgentRecord): PromptRecord | undefined {
  return herd.registry.pending(rec);
}

/** Every prompt the sheep still owes: the active one, then the queued follow-ups in order. */
export function pendingPrompts(herd: Herd, rec: AgentRecord): PromptRecord[] {
  const active = activePrompt(herd, rec);
  const queued = (rec.queue ?? []).map((id) => herd.registry.prompts.get(id)).filter((p): p is PromptRecord => p !== undefined && !p.settled);
  return active ? [active, ...queued] : queued;
}

/** Settles everything the sheep still owes with one outcome (it closed, or it is gone). */
export async function settleAll(herd: Herd, rec: AgentRecord, outcome: Outcome): Promise<string[]> {
  const pending = pendingPrompts(herd, rec);
  for (const p of pending) await settle(herd, p, outcome);
  return pending.map((p) => p.promptId);
}

function fromResult(r: SheepResult, prompt: PromptRecord, rec: AgentRecord): Outcome {
  // A result the host would not read is still final: waiting longer would not make it readable.
  if (r.refused)
    return { status: "failed", text: "", error: `[${r.refused.code}] ${r.refused.reason}`, ...(rec.sessionPath ? { sessionPath: rec.sessionPath } : {}) };
  const { started, finished } = turnTimes(r, prompt);
  const error = r.budgetExceeded
    ? `[budget_exceeded] ${r.errorMessage ?? "the sheep's budget is spent; its turn was stopped"}. Spent: ${sheepSpendText(rec)}.`
    : r.status === "failed"
      ? `[provider_error] ${r.errorMessage ?? "the model call failed"}`
      : r.status === "cancelled"
        ? `[cancelled] ${r.errorMessage ?? "the turn was aborted in the sheep"}`
        : undefined;
  const sent = prompt.steerIds ?? [];
  const got = Array.isArray(r.steered) ? r.steered.filter((id) => sent.includes(id)).length : 0;
  return {
    status: r.status,
    text: r.text,
    ...(error !== undefined ? { error } : {}),
    ...(r.stopReason !== undefined ? { stopReason: r.stopReason } : {}),
    ...(r.usage !== undefined ? { usage: r.usage } : {}),
    ...(r.model !== undefined ? { model: r.model } : {}),
    sessionPath: r.sessionPath ?? rec.sessionPath,
    // The host clamped both times to real instants; a finish before the start (a clock set back) is no time at all.
    ...(Number.isFinite(finished - started) ? { durationMs: Math.max(0, finished - started) } : {}),
    ...(sent.length > 0 ? { steered: got, ...(sent.length > got ? { steersMissed: sent.length - got } : {}) } : {}),
    ...(rec.spent ? { spent: rec.spent } : {}),
    ...(rec.budget ? { budget: rec.budget } : {}),
  };
}

/**
 * When the prompt's turn ran, as the sheep says (its own clock: the difference holds on a host
 * whose clock is off). A follow-up queued behind another starts when the sheep took it, not when
 * it was sent; without the sheep's word, when it became the active prompt. The times are kept on
 * the prompt for the views (once: a settled prompt keeps its own).
 */
function turnTimes(r: SheepResult, prompt: PromptRecord): { started: number; finished: number } {
  const at = (t: string | undefined) => (t === undefined ? NaN : Date.parse(t));
  const sheepStarted = at(r.startedAt);
  const started = Number.isFinite(sheepStarted) ? sheepStarted : Date.parse(prompt.startedAt ?? prompt.submittedAt);
  const finished = at(r.finishedAt);
  if (!prompt.settled) {
    if (Number.isFinite(started)) prompt.startedAt = new Date(started).toISOString();
    if (Number.isFinite(finished) && finished >= started) prompt.finishedAt = new Date(finished).toISOString();
  }
  return { started, finished };
}

/** This sheep, or every live one. */
function sheepOrAll(herd: Herd, agentId?: AgentId): AgentRecord[] {
  const reg = herd.registry;
  return agentId === undefined ? [...reg.agents.values()].filter((a) => a.state !== "closed") : [reg.agent(agentId)];
}

/** The prompts not settled yet (the running one, then those queued): of this sheep, or of every live one. */
export function pendingIds(herd: Herd, agentId?: AgentId): string[] {
  return sheepOrAll(herd, agentId).flatMap((rec) => pendingPrompts(herd, rec).map((p) => p.promptId));
}

/**
 * What a person's wait shows: the answers to a person's prompts that nobody has seen (neither
 * shown nor given to the conversation), oldest first, then the prompts still pending; of this
 * sheep, or of every live one. An answer that came in before the wait was typed is not lost.
 */
export function forPerson(herd: Herd, agentId?: AgentId): string[] {
  const sheep = new Set(sheepOrAll(herd, agentId).map((a) => a.agentId));
  const unseen = [...herd.registry.prompts.values()].filter(
    (p) => sheep.has(p.agentId) && p.settled && personEdge(p.edge) && !p.shown && !p.delivered && !p.delegationId,
  );
  return [...unseen.map((p) => p.promptId), ...pendingIds(herd, agentId)];
}
