/** Booting a sheep: its files prepared, a pane recorded before anything runs in it, and readiness; a start that fails closes only its own pane. */
import { currentEdge } from "../herd/edge.ts";
import type { Budget } from "../../domain/budget.ts";
import { closeAndConfirm } from "./close.ts";
import { errorText, exitText, shorten, ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { newId, type AgentId } from "../../domain/ids.ts";
import { howEnded } from "../herd/liveness.ts";
import { takeBaseline } from "../prompts/evidence.ts";
import type { AgentRecord, PromptRecord, ResumeCard, StartRequest } from "../../ports/types.ts";
import { isolate } from "./worktrees.ts";

/** A sheep for the warm pool: booted like any other, kept out of the herd until a start takes it. */
export function launchWarm(herd: Herd, req: StartRequest, label: string, signal?: AbortSignal): Promise<AgentRecord> {
  return launch(herd, req, label, signal, true);
}

export async function launch(herd: Herd, req: StartRequest, label: string, signal?: AbortSignal, warm = false): Promise<AgentRecord> {
  const { runtime, files: host } = herd.opts;
  const agentId = newId("agent");
  const isolated = req.isolate
    ? await isolate(herd, {
        cwd: req.cwd,
        agentId,
        label,
        ...(req.host !== undefined ? { host: req.host } : {}),
        ...(req.isolateFrom ? { from: req.isolateFrom } : {}),
      })
    : undefined;
  const cwd = isolated?.cwd ?? req.cwd;
  // A resumed isolated sheep runs in the worktree its conversation began in, and takes it over.
  // Its holder is held from here until the record that takes the worktree is written: a prune
  // or close meanwhile would remove it from under the sheep starting in it.
  const candidate = req.resume ? worktreeHolder(herd, req.resume) : undefined;
  const releaseHolder = candidate ? await herd.hold(candidate.agentId) : () => {};
  const holder = candidate?.worktree && herd.registry.agents.get(candidate.agentId) === candidate ? candidate : undefined;
  // Until the record holds it, a failed start removes the fresh worktree: it holds nothing of anyone's.
  const discard = async (e: unknown): Promise<never> => {
    releaseHolder();
    if (isolated) await herd.opts.workspace?.remove(isolated.worktree).catch(() => undefined);
    throw e;
  };
  const prepared = await host
    .prepare({
      agentId,
      definition: req.definition,
      cwd,
      ...(req.model !== undefined ? { model: req.model } : {}),
      label,
      createdAt: new Date(herd.clock.now()).toISOString(),
      ...(req.host !== undefined ? { host: req.host } : {}),
      ...(req.resume ? { resume: { from: req.resume.agentId, sessionPath: req.resume.sessionPath } } : {}),
      ...(req.sandbox ? { sandbox: true as const } : {}),
    })
    .catch(discard);
  // The first prompt waits in the inbox before pi starts: the sheep takes it as it becomes ready.
  // A start that never launches removes what prepare wrote: the spec holds forwarded secrets (issue 31, item 7).
  const unprepare = async (e: unknown): Promise<never> => {
    await host.cleanup(agentId).catch(() => undefined);
    return discard(e);
  };
  const first = req.prompt && !warm ? await firstPrompt(herd, agentId, cwd, req.prompt, req.budget?.budget).catch(unprepare) : undefined;
  const pane = await runtime
    .createPane({
      agentId,
      placement: req.placement ?? "tab",
      direction: req.direction ?? "right",
      cwd,
      label,
      command: prepared.command,
    })
    .catch(unprepare); // no pane: nothing else will remove the files prepare wrote
  const model = req.model ?? req.definition.model;
  const createdAt = new Date(herd.clock.now()).toISOString();
  const rec: AgentRecord = {
    agentId,
    agent: req.definition.name,
    label,
    runtime: pane.runtime ?? runtime.name,
    ...(req.host !== undefined ? { host: req.host } : {}),
    paneId: pane.paneId,
    cwd,
    ...(model !== undefined ? { model } : {}),
    sessionPath: prepared.sessionPath,
    createdAt,
    owner: herd.opts.owner,
    state: "starting",
    stateSince: createdAt,
    ...(pane.attachHint !== undefined ? { attachHint: pane.attachHint } : {}),
    ...(isolated ? { worktree: isolated.worktree } : holder ? { worktree: holder.worktree! } : {}),
    ...(req.resume ? { resumedFrom: req.resume.agentId } : {}),
    ...(warm ? { warm: true as const } : {}),
    ...(first ? { activePromptId: first.promptId } : {}),
    ...(prepared.sandboxed ? { sandboxed: true as const } : {}),
    ...(req.budget ? { ledgerKey: req.budget.key, ...(req.budget.budget ? { budget: req.budget.budget } : {}) } : {}),
  };
  if (first) herd.registry.prompts.set(first.promptId, first);
  // Moved, not shared, in the same write that records the sheep: one record owns a worktree at a time.
  if (holder) delete holder.worktree;
  // Recorded before waiting for the sheep: whatever happens next, we know the pane is ours.
  if (warm) herd.registry.warm.set(agentId, rec);
  else herd.registry.agents.set(agentId, rec);
  releaseHolder(); // the record holds the worktree now
  req.onRecorded?.(agentId, label);
  await herd.persist();
  herd.audit({
    event: "start",
    agentId,
    label,
    agent: rec.agent,
    runtime: rec.runtime,
    paneId: rec.paneId,
    cwd: rec.cwd,
    ...(model !== undefined ? { model } : {}),
    ...(req.resume ? { resumedFrom: req.resume.agentId } : {}),
    ...(warm ? { warm: true as const } : {}),
    ...(prepared.sandboxed ? { sandboxed: true as const } : {}),
  });
  if (first) herd.audit({ event: "prompt", agentId, label, promptId: first.promptId, bytes: Buffer.byteLength(req.prompt!.text, "utf8") });
  herd.watch(agentId);
  try {
    await untilReady(herd, rec, signal);
  } catch (e) {
    // The caller never had the prompt's id: a start that failed owes no answer.
    if (first) {
      herd.registry.prompts.delete(first.promptId);
      delete rec.activePromptId;
    }
    await abandon(herd, rec, e, holder);
  }
  herd.setState(rec, first ? "working" : "idle");
  // A warm sheep's files change only once it is taken: until then nobody needs its bell.
  if (warm) herd.unwatch(agentId);
  await herd.persist();
  herd.audit({ event: "ready", agentId, label, ...(warm ? { warm: true as const } : {}) });
  return rec;
}

/** The first prompt of a cold start, its baseline taken and its file in the inbox before pi starts. */
async function firstPrompt(
  herd: Herd,
  agentId: AgentId,
  cwd: string,
  p: NonNullable<StartRequest["prompt"]>,
  budget: Budget | undefined,
): Promise<PromptRecord> {
  if (p.text.length === 0) throw new ShepherdError("invalid_params", "message must be a non-empty string.");
  const bytes = Buffer.byteLength(p.text, "utf8");
  if (bytes > herd.opts.maxPromptBytes) {
    throw new ShepherdError(
      "invalid_params",
      `message is ${bytes} bytes; the limit is ${herd.opts.maxPromptBytes}. Put the material in a file and name the file in the prompt.`,
    );
  }
  const record: PromptRecord = {
    promptId: newId("prompt"),
    agentId,
    submittedAt: new Date(herd.clock.now()).toISOString(),
    edge: currentEdge(),
    ...(p.delegationId !== undefined ? { delegationId: p.delegationId } : {}),
  };
  // As any prompt that starts now: from this state of the working tree, taken before the sheep can see it.
  await takeBaseline(herd, { cwd, agentId }, record);
  await herd.opts.files.submit(agentId, { kind: "prompt", promptId: record.promptId, text: p.text, ...(budget ? { budget } : {}) });
  return record;
}

/**
 * Our closed sheep that holds the worktree a resumed conversation runs in: the last one on that
 * session whose worktree holds the card's cwd (a resume of a resume finds the one that has it now).
 */
function worktreeHolder(herd: Herd, card: ResumeCard): AgentRecord | undefined {
  const inside = (path: string) => card.cwd === path || card.cwd.startsWith(`${path}/`);
  const holders = [...herd.registry.agents.values()].filter(
    (r) => r.owner === herd.opts.owner && r.state === "closed" && r.sessionPath === card.sessionPath && r.worktree && inside(r.worktree.path),
  );
  return holders.at(-1);
}

async function untilReady(herd: Herd, rec: AgentRecord, signal?: AbortSignal): Promise<void> {
  const deadline = herd.clock.now() + herd.opts.startTimeoutMs;
  for (;;) {
    const snap = await herd.opts.files.snapshot(rec.agentId);
    // An answer up to an interval old will do: once ready, the sheep just wrote from its pane.
    const live = await herd.liveness.get(rec);
    const exit = howEnded(snap, live);
    if (exit) throw new ShepherdError("start_failed", `pi exited before it was ready (${exitText(exit)}).`);
    if (live?.state === "gone") throw new ShepherdError("start_failed", "the pane vanished while the sheep was starting.");
    if (snap.ready) return;
    const left = deadline - herd.clock.now();
    if (left <= 0) throw new ShepherdError("start_failed", `the sheep was not ready after ${herd.opts.startTimeoutMs / 1000} s.`);
    await herd.bells.next([rec.agentId], Math.min(left, herd.opts.livenessIntervalMs), herd.clock, signal);
  }
}

/** Start failed: keep the reason and the pane's last words, close only our pane, then throw. */
async function abandon(herd: Herd, rec: AgentRecord, cause: unknown, lent?: AgentRecord): Promise<never> {
  const { runtime, files: host } = herd.opts;
  const lines = await runtime.read(rec.paneId, 30).catch(() => "");
  // A pane that could not be closed (the multiplexer stopped answering) stays ours: its record is
  // what lets close, prune or the next shepherd find it, and its pi may still read its files.
  const kept = await closeAndConfirm(herd, rec);
  if (kept === undefined) {
    herd.unwatch(rec.agentId);
    await host.cleanup(rec.agentId).catch(() => undefined);
    // The sheep never became ready, so it wrote nothing into its worktree: a fresh one goes, and one
    // taken over from the sheep it was to resume goes back to it, with the work in it.
    if (rec.worktree && lent) {
      lent.worktree = rec.worktree;
      // Pruned meanwhile (closed, it held nothing then): it is the record that leads to the work again.
      if (!herd.registry.agents.has(lent.agentId)) herd.registry.agents.set(lent.agentId, lent);
    } else if (rec.worktree) await herd.opts.workspace?.remove(rec.worktree).catch(() => undefined);
    herd.forget(rec);
  }
  await herd.persist();
  const reason =
    cause instanceof ShepherdError && cause.code === "start_failed" ? cause.message.replace(/^\[start_failed\] /, "") : (abortText(cause) ?? errorText(cause));
  // Logged here, where the sheep is still known; the tool's entry logs every other failure.
  herd.audit({ event: "failure", agentId: rec.agentId, label: rec.label, reason: "start_failed", error: shorten(reason) });
  const tail = lines.trim() ? `\nLast lines of its pane:\n${lines.trimEnd().split("\n").slice(-15).join("\n")}` : "";
  const still =
    kept === undefined
      ? ""
      : `\nIts pane ${rec.paneId} could not be closed (${kept}); the sheep stays recorded as ${rec.agentId}: close it once the multiplexer answers again.`;
  throw new ShepherdError("start_failed", `sheep "${rec.label}" (${rec.agent}) did not start: ${reason}${still}${tail}`, { cause });
}

function abortText(e: unknown): string | undefined {
  if (e instanceof DOMException && e.name === "AbortError") return "the start was cancelled";
  return undefined;
}
