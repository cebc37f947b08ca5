/** Starting a sheep: a unique label, then a warm sheep handed over or a cold one booted (launch.ts). */
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { labelProblem, MAX_LABEL_LENGTH } from "../../domain/labels.ts";
import { takeSession } from "./resume.ts";
import { prompt } from "../prompts/prompt.ts";
import type { AgentRecord, StartedAgent, StartRequest } from "../../ports/types.ts";
import type { Placement } from "../../ports/runtime.ts";
import { launch } from "./launch.ts";

export async function start(herd: Herd, req: StartRequest, signal?: AbortSignal): Promise<StartedAgent> {
  // A resume takes its session first: the sheep it continues, if merely exited, is closed then,
  // and its label (kept when free) is free again.
  const releaseSession = req.resume ? await takeSession(herd, req.resume) : () => {};
  try {
    return await startHeld(herd, req, signal);
  } catch (e) {
    // A start that failed spent nothing: its reservation of the day is let go.
    herd.spend.release(req.budget);
    throw e;
  } finally {
    releaseSession();
  }
}

async function startHeld(herd: Herd, req: StartRequest, signal?: AbortSignal): Promise<StartedAgent> {
  const label = pickLabel(herd, req.label, req.resume?.label ?? req.definition.name);
  const release = herd.registry.reserveLabel(label);
  try {
    const warm = herd.warm ? await herd.warm.take(req, signal) : undefined;
    if (warm) {
      const started = await handOver(herd, warm, req, label);
      if (!req.prompt) return started;
      const p = await prompt(herd, warm.agentId, req.prompt.text, req.prompt.delegationId !== undefined ? { delegationId: req.prompt.delegationId } : {});
      return { ...started, promptId: p.promptId };
    }
    const rec = await launch(herd, req, label, signal);
    return { ...startedOf(rec), ...(rec.activePromptId !== undefined && req.prompt ? { promptId: rec.activePromptId } : {}) };
  } finally {
    // by now the record holds the label, or the start failed and it is free again
    release();
  }
}

/**
 * A sheep of the warm pool becomes the caller's: it gets the label, and it is in the herd from
 * now on. Nothing boots, so this costs a pane rename and a write of the records.
 */
async function handOver(herd: Herd, rec: AgentRecord, req: StartRequest, label: string): Promise<StartedAgent> {
  const { runtime, files: host } = herd.opts;
  delete rec.warm;
  rec.label = label;
  if (req.budget) {
    rec.ledgerKey = req.budget.key;
    if (req.budget.budget) rec.budget = req.budget.budget;
  }
  rec.createdAt = new Date(herd.clock.now()).toISOString();
  herd.registry.agents.set(rec.agentId, rec);
  req.onRecorded?.(rec.agentId, label);
  herd.watch(rec.agentId);
  // A warm sheep waits in a window of its own (warm.ts, waitingPlace); a start that splits the
  // shepherd's pane moves it there. A move that fails leaves it in its window: still the sheep asked for.
  const placement = req.placement ?? "tab";
  const moved =
    placement === "pane" && runtime.place
      ? await runtime.place(rec, "pane", req.direction ?? "right").then(
          () => true,
          () => false,
        )
      : false;
  // Names are for people: the start does not wait for them, and a pane still called after the
  // pool is no reason to fail it.
  void runtime.relabel?.(rec, label, moved ? "pane" : waitingPlace(placement)).catch(() => undefined);
  void host.relabel?.(rec.agentId, label).catch(() => undefined);
  await herd.persist();
  herd.audit({ event: "take", agentId: rec.agentId, label, agent: rec.agent, paneId: rec.paneId, ...(rec.model !== undefined ? { model: rec.model } : {}) });
  return startedOf(rec);
}

/** Where a warm sheep waits: where the setting puts sheep, but a split of the shepherd's pane waits in a window of its own. */
export function waitingPlace(placement: Placement): Placement {
  return placement === "pane" ? "tab" : placement;
}

function startedOf(rec: AgentRecord): StartedAgent {
  const {
    owner: _owner,
    state: _state,
    activePromptId: _active,
    warm: _warm,
    ledgerKey: _key,
    ledgerDay: _day,
    ledgerBase: _base,
    budgetWarned: _warned,
    ...started
  } = rec;
  return started;
}

function pickLabel(herd: Herd, wanted: string | undefined, name: string): string {
  if (wanted !== undefined) {
    const label = wanted.trim();
    const bad = labelProblem(label);
    if (bad) throw new ShepherdError("invalid_params", `label ${bad}; pick a plain one.`);
    if (herd.registry.labelTaken(label)) {
      throw new ShepherdError("invalid_params", `label "${label}" is already used by a live sheep; pick another.`);
    }
    return label;
  }
  for (let n = 1; ; n++) {
    // A label taken from an earlier sheep may already be as long as a label can be.
    const label = n === 1 ? name : `${[...name].slice(0, MAX_LABEL_LENGTH - 1 - String(n).length).join("")}-${n}`;
    if (!herd.registry.labelTaken(label)) return label;
  }
}
