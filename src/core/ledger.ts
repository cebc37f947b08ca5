/**
 * The ledger of prompts: each settles exactly once, from the sheep's result file or from what
 * the core saw happen, and the first outcome is the one every later wait returns.
 */
import type { SheepResult, SheepSnapshot } from "../ports/sheep-host.js";
import { evidenceOf } from "./evidence.js";
import { shorten } from "./errors.js";
import type { Herd } from "./herd.js";
import type { AgentRecord, PromptRecord, WaitItem } from "./types.js";

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
      agentId: prompt.agentId,
      ...(rec ? { label: rec.label } : {}),
      promptId: prompt.promptId,
      status: outcome.status,
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      ...(outcome.usage !== undefined ? { usage: outcome.usage } : {}),
      ...(outcome.error !== undefined ? { error: shorten(outcome.error) } : {}),
    });
    if (rec && rec.activePromptId === prompt.promptId && rec.state === "working") rec.state = "idle";
    herd.bells.ring(prompt.agentId);
    void herd.persist();
    return prompt.settled;
  })().finally(() => herd.settling.delete(prompt.promptId));
  herd.settling.set(prompt.promptId, done);
  return done;
}

/** Settles the prompt when its result file is there; returns the sheep's latest report. */
export async function settleFromDisk(herd: Herd, rec: AgentRecord, prompt: PromptRecord): Promise<SheepSnapshot> {
  const result = await herd.opts.host.result(rec.agentId, prompt.promptId);
  if (result) await settle(herd, prompt, fromResult(result, prompt, rec));
  return herd.opts.host.snapshot(rec.agentId);
}

/** Reads the sheep's files once: settles its active prompt if answered, and returns its report. */
export async function refresh(herd: Herd, rec: AgentRecord): Promise<SheepSnapshot> {
  const active = activePrompt(herd, rec);
  return active ? settleFromDisk(herd, rec, active) : herd.opts.host.snapshot(rec.agentId);
}

/** The sheep's unsettled prompt, if it has one. */
export function activePrompt(herd: Herd, rec: AgentRecord): PromptRecord | undefined {
  const active = rec.activePromptId ? herd.registry.prompts.get(rec.activePromptId) : undefined;
  return active && !active.settled ? active : undefined;
}

function fromResult(r: SheepResult, prompt: PromptRecord, rec: AgentRecord): Outcome {
  const started = r.startedAt ? Date.parse(r.startedAt) : Date.parse(prompt.submittedAt);
  const finished = r.finishedAt ? Date.parse(r.finishedAt) : NaN;
  const error =
    r.status === "failed"
      ? `[provider_error] ${r.errorMessage ?? "the model call failed"}`
      : r.status === "cancelled"
        ? `[cancelled] ${r.errorMessage ?? "the turn was aborted in the sheep"}`
        : undefined;
  return {
    status: r.status,
    text: r.text,
    ...(error !== undefined ? { error } : {}),
    ...(r.stopReason !== undefined ? { stopReason: r.stopReason } : {}),
    ...(r.usage !== undefined ? { usage: r.usage } : {}),
    ...(r.model !== undefined ? { model: r.model } : {}),
    sessionPath: r.sessionPath ?? rec.sessionPath,
    ...(Number.isFinite(finished - started) ? { durationMs: finished - started } : {}),
  };
}
