/**
 * Handing a sheep a prompt, always as a file, never typed. A sheep has one active prompt; to a
 * working sheep a prompt is refused ([prompt_pending]) unless it steers the running turn or
 * queues behind it as a follow-up. A caller's requestId makes a prompt idempotent.
 */
import { NO_SPEND, overBudget } from "../../domain/budget.ts";
import { currentEdge } from "../herd/edge.ts";
import { errorText, ShepherdError } from "../../domain/errors.ts";
import { takeBaseline } from "./evidence.ts";
import { firstLineOf, MAX_QUEUED } from "../../domain/bounds.ts";
import type { Herd } from "../herd/herd.ts";
import { derivedId, newId, type AgentId } from "../../domain/ids.ts";
import { activePrompt, pendingPrompts, refresh } from "./ledger.ts";
import { findRecord } from "../herd/owners.ts";
import { withConflictNote } from "./sync.ts";
import type { AgentRecord, PromptOptions, PromptRecord, SubmittedPrompt } from "../../ports/types.ts";
import { MAX_REQUEST_ID_CHARS } from "../../domain/bounds.ts";

/** How the busy refusal ends for the tool; /shepherd and the panel say it in their own words (their flags, their buttons). */
export const BUSY_WAYS_TOOL = 'wait for it, or send with deliverAs "steer" (into its running turn) or "followUp" (queued behind it).';

export async function prompt(herd: Herd, agentId: AgentId, message: string, opts: PromptOptions = {}): Promise<SubmittedPrompt> {
  const rec = await findRecord(herd, agentId);
  if (message.length === 0) {
    throw new ShepherdError("invalid_params", "message must be a non-empty string.");
  }
  const bytes = Buffer.byteLength(message, "utf8");
  if (bytes > herd.opts.maxPromptBytes) {
    throw new ShepherdError(
      "invalid_params",
      `message is ${bytes} bytes; the limit is ${herd.opts.maxPromptBytes}. Put the material in a file and name the file in the prompt.`,
    );
  }
  const { requestId } = opts;
  if (requestId !== undefined && (requestId.length === 0 || requestId.length > MAX_REQUEST_ID_CHARS)) {
    throw new ShepherdError("invalid_params", `requestId must be 1 to ${MAX_REQUEST_ID_CHARS} characters.`);
  }
  // One operation on a sheep at a time: a close racing this prompt must not be undone by it.
  return herd.exclusive(rec.agentId, async () => {
    if (herd.registry.agents.get(rec.agentId) !== rec) throw herd.registry.unknownAgent(rec.agentId);
    // The same requestId is the same prompt: its original handle, and nothing sent again.
    const again = requestId === undefined ? undefined : seenBefore(herd, rec, requestId);
    if (again) return again;
    refuseIfGone(rec);
    const snap = await refresh(herd, rec);
    const active = activePrompt(herd, rec);
    if (active && opts.deliverAs === undefined) {
      throw new ShepherdError("prompt_pending", `sheep ${rec.agentId} (${rec.label}) is still working on ${active.promptId}; ${BUSY_WAYS_TOOL}`);
    }
    // Where the multiplexer reports pi's end (tmux) there is no exit report to read, but a pi
    // that is not running answers no prompt either.
    if (snap.exited || snap.piGone) {
      herd.setState(rec, "exited");
      refuseIfGone(rec);
    }
    // A sheep whose budget is spent answers no more: said here, before anything is sent.
    const over = overBudget(rec.budget, rec.spent ?? NO_SPEND);
    if (over !== undefined) {
      throw new ShepherdError(
        "budget_exceeded",
        `sheep ${rec.agentId} (${rec.label}) has spent its budget (${over}); start another sheep with a budget of its own.`,
      );
    }
    if (active && opts.deliverAs === "steer") return steer(herd, rec, active, message, opts);
    const queued = active ? pendingPrompts(herd, rec).map((p) => p.promptId) : [];
    if (queued.length > MAX_QUEUED) {
      throw new ShepherdError(
        "queue_full",
        `sheep ${rec.agentId} (${rec.label}) already has ${MAX_QUEUED} follow-ups queued behind ${active!.promptId}; wait for some of them first.`,
      );
    }
    const promptId = requestId === undefined ? newId("prompt") : derivedId("prompt", rec.agentId, requestId);
    const submittedAt = new Date(herd.clock.now()).toISOString();
    const record: PromptRecord = {
      promptId,
      agentId: rec.agentId,
      submittedAt,
      firstLine: firstLineOf(message),
      edge: currentEdge(),
      ...(opts.notify ? { notify: true as const } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
      ...(opts.delegationId !== undefined ? { delegationId: opts.delegationId } : {}),
    };
    herd.registry.prompts.set(promptId, record);
    const before = { activePromptId: rec.activePromptId, queue: rec.queue, state: rec.state };
    if (active) rec.queue = [...(rec.queue ?? []), promptId];
    else {
      rec.activePromptId = promptId;
      herd.setState(rec, "working");
    }
    // A prompt that starts now starts from this state of the sheep's working tree, taken before the
    // sheep can see it; a queued follow-up starts where the prompt before it ends (see the ledger).
    if (!active) await takeBaseline(herd, rec, record);
    try {
      await herd.opts.files.submit(rec.agentId, {
        kind: "prompt",
        promptId,
        text: await withConflictNote(herd, rec, message),
        ...(rec.budget ? { budget: rec.budget } : {}),
      });
    } catch (e) {
      herd.registry.prompts.delete(promptId);
      Object.assign(rec, before);
      if (!rec.activePromptId) delete rec.activePromptId;
      if (!rec.queue) delete rec.queue;
      throw new ShepherdError("runtime_error", `could not deliver the prompt to ${rec.agentId}: ${errorText(e)}`);
    }
    await herd.persist();
    herd.audit({ event: "prompt", agentId: rec.agentId, label: rec.label, promptId, bytes });
    // A prompt whose result is owed to the conversation is watched from now on, even if no file moves.
    if (opts.notify) herd.bells.nudge();
    return {
      promptId,
      agentId: rec.agentId,
      submittedAt,
      ...(opts.notify ? { notify: true as const } : {}),
      ...(active ? { deliverAs: "followUp" as const, queuedBehind: queued } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
    };
  });
}

/** Into the running turn: the answer comes on the active prompt, whose result counts its steers. */
async function steer(herd: Herd, rec: AgentRecord, target: PromptRecord, message: string, opts: PromptOptions): Promise<SubmittedPrompt> {
  const steerId = opts.requestId === undefined ? newId("steer") : derivedId("steer", rec.agentId, opts.requestId);
  const before = target.steerIds;
  target.steerIds = [...(target.steerIds ?? []), steerId];
  const notifyBefore = target.notify;
  if (opts.notify) target.notify = true;
  try {
    await herd.opts.files.submit(rec.agentId, { kind: "steer", steerId, target: target.promptId, text: message });
  } catch (e) {
    if (before) target.steerIds = before;
    else delete target.steerIds;
    if (!notifyBefore) delete target.notify;
    throw new ShepherdError("runtime_error", `could not deliver the steer to ${rec.agentId}: ${errorText(e)}`);
  }
  await herd.persist();
  herd.audit({ event: "steer", agentId: rec.agentId, label: rec.label, promptId: target.promptId, steerId, bytes: Buffer.byteLength(message, "utf8") });
  if (opts.notify) herd.bells.nudge();
  return handle(target, { deliverAs: "steer", steerId, ...(opts.requestId !== undefined ? { requestId: opts.requestId } : {}) });
}

/** The original handle of a requestId already used with this sheep (a prompt, or a steer into one). */
function seenBefore(herd: Herd, rec: AgentRecord, requestId: string): SubmittedPrompt | undefined {
  const promptId = derivedId("prompt", rec.agentId, requestId);
  const p = herd.registry.prompts.get(promptId);
  if (p) return handle(p, { duplicate: true, requestId });
  const steerId = derivedId("steer", rec.agentId, requestId);
  for (const q of herd.registry.prompts.values()) {
    if (q.agentId === rec.agentId && q.steerIds?.includes(steerId)) return handle(q, { deliverAs: "steer", steerId, duplicate: true, requestId });
  }
  return undefined;
}

function handle(p: PromptRecord, extra: Partial<SubmittedPrompt>): SubmittedPrompt {
  return { promptId: p.promptId, agentId: p.agentId, submittedAt: p.submittedAt, ...(p.notify ? { notify: true as const } : {}), ...extra };
}

function refuseIfGone(rec: AgentRecord): void {
  if (rec.state === "closed") {
    throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) is closed; start a new one.`);
  }
  if (rec.state === "exited") {
    throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) has exited; close it and start a new one.`);
  }
}
