/**
 * Evidence, not claims: a baseline of the sheep's working tree when a prompt is submitted, and
 * what changed since when it settles. A sheep outside git gets neither, and no error.
 */
import type { AgentId } from "../../domain/ids.ts";
import { errorText, ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { findRecord } from "../herd/owners.ts";
import type { AgentRecord, PromptRecord, WaitItem } from "../../ports/types.ts";

/** Records the sheep's working tree before the prompt reaches it; a failure only costs the evidence. */
export async function takeBaseline(herd: Herd, rec: Pick<AgentRecord, "cwd" | "agentId">, prompt: PromptRecord): Promise<void> {
  const { workspace, evidence } = herd.opts;
  if (!workspace || !evidence) return;
  try {
    const baseline = await workspace.baseline(rec.cwd, rec.agentId);
    if (baseline) prompt.baseline = baseline;
  } catch (e) {
    prompt.evidenceError = `${errorText(e)} (no baseline was taken, so this prompt has no evidence)`;
  }
}

/**
 * A follow-up queued behind a prompt starts when that prompt ends: its baseline is the state the
 * settled prompt's evidence ended with. The sheep takes it up as soon as it finishes the one
 * before, so the line between the two is where the shepherd saw the first result.
 */
export function nextBaseline(settled: PromptRecord, next: PromptRecord): void {
  if (next.baseline || next.evidenceError || !settled.settled) return;
  const e = settled.settled.evidence;
  if (e) {
    // On the machine the prompt before ran on: the host travels with the baseline.
    next.baseline = {
      root: e.baseline.root,
      ...(e.baseline.host !== undefined ? { host: e.baseline.host } : {}),
      ...(e.afterCommit ? { commit: e.afterCommit } : {}),
      tree: e.after,
      takenAt: e.afterAt,
    };
  } else if (settled.baseline || settled.settled.evidenceError) {
    next.evidenceError = "the prompt before it has no evidence, so this one has no baseline";
  }
}

/** What changed during the prompt, for its result; never throws. */
export async function evidenceOf(herd: Herd, prompt: PromptRecord): Promise<Pick<WaitItem, "evidence" | "evidenceError">> {
  if (prompt.evidenceError) return { evidenceError: prompt.evidenceError };
  const { workspace, files: host, evidenceInlineLines } = herd.opts;
  if (!workspace || !prompt.baseline) return {};
  try {
    const patchPath = await host.evidencePath(prompt.agentId, prompt.promptId);
    const diff = await workspace.diff(prompt.baseline, { patchPath, inlineLines: evidenceInlineLines });
    return { evidence: { ...diff, shared: !herd.registry.agents.get(prompt.agentId)?.worktree } };
  } catch (e) {
    return { evidenceError: errorText(e) };
  }
}

export interface LatestEvidence {
  agentId: string;
  label: string;
  promptId: string;
  evidence?: WaitItem["evidence"];
  evidenceError?: string;
  /** A prompt still being worked on, whose evidence comes when it settles. */
  pending?: string;
}

/** The newest settled prompt of the sheep that has evidence (or says why it has none). */
export async function latestEvidence(herd: Herd, agentId: AgentId): Promise<LatestEvidence> {
  const rec = await findRecord(herd, agentId);
  const active = rec.activePromptId ? herd.registry.prompts.get(rec.activePromptId) : undefined;
  const pending = active && !active.settled ? active.promptId : undefined;
  const mine = [...herd.registry.prompts.values()].filter((p) => p.agentId === rec.agentId).reverse();
  const found = mine.find((p) => p.settled && (p.settled.evidence || p.settled.evidenceError));
  if (!found?.settled) {
    const why = pending
      ? `its prompt ${pending} is still running; evidence comes with its result (wait for it)`
      : mine.some((p) => p.settled)
        ? `its cwd ${rec.cwd} is not in a git working tree (or evidence is turned off)`
        : "it has not finished a prompt yet";
    throw new ShepherdError("no_evidence", `sheep ${rec.agentId} (${rec.label}) has no evidence: ${why}.`);
  }
  const { evidence, evidenceError } = found.settled;
  return {
    agentId: rec.agentId,
    label: rec.label,
    promptId: found.promptId,
    ...(evidence ? { evidence } : {}),
    ...(evidenceError ? { evidenceError } : {}),
    ...(pending ? { pending } : {}),
  };
}
