/**
 * The shepherd quits (closeOnExit): a quit never throws away work in flight. A sheep with nothing
 * in flight is closed; one that still owes an answer (a prompt active or queued) or holds a result
 * nobody received keeps running, and its record stays written under this shepherd, whose process
 * is gone by the time the next shepherd on the agent dir looks: that one adopts it (see attach).
 */
import { close } from "./close.ts";
import { bounded } from "../herd/bounded.ts";
import { errorText } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { pendingPrompts, refresh } from "../prompts/ledger.ts";
import type { AgentRecord, PromptRecord } from "../../ports/types.ts";

export interface KeptAtQuit {
  agentId: string;
  label: string;
  /** The prompts it still answers, active first. */
  working: string[];
  /** Settled prompts whose result nobody received (no wait returned it, no push carried it). */
  unreceived: string[];
  /** Its files could not be read, so whether it works is unknown: kept rather than guessed. */
  unread?: string;
}

export interface QuitOutcome {
  closed: string[];
  kept: KeptAtQuit[];
  /** Idle sheep whose close failed: their records stay too. */
  failed: { agentId: string; label: string; error: string }[];
}

/**
 * A settled result reached someone: a wait returned it, a push carried it, its background
 * delegation's did, or it was shown to a person (their /shepherd wait, a read, the panel).
 */
function received(herd: Herd, p: PromptRecord): boolean {
  if (p.delivered || p.shown) return true;
  const d = p.delegationId ? herd.registry.delegations.get(p.delegationId) : undefined;
  return d?.delivered !== undefined;
}

/** What a sheep has in flight, once what its files say has settled; undefined when nothing. */
async function inFlight(herd: Herd, rec: AgentRecord): Promise<KeptAtQuit | undefined> {
  const kept = (o: Partial<KeptAtQuit>): KeptAtQuit => ({ agentId: rec.agentId, label: rec.label, working: [], unreceived: [], ...o });
  try {
    // A result that landed meanwhile settles first: it is then a result nobody received.
    await refresh(herd, rec);
  } catch (e) {
    return kept({ working: pendingPrompts(herd, rec).map((p) => p.promptId), unread: errorText(e) });
  }
  const working = pendingPrompts(herd, rec).map((p) => p.promptId);
  const unreceived = [...herd.registry.prompts.values()].filter((p) => p.agentId === rec.agentId && p.settled && !received(herd, p)).map((p) => p.promptId);
  return working.length > 0 || unreceived.length > 0 ? kept({ working, unreceived }) : undefined;
}

/** How long a quit waits for one sheep's machine: abort and quit end promptly whatever a host does. */
export const QUIT_LOOK_MS = 5_000;

export async function quit(herd: Herd): Promise<QuitOutcome> {
  const out: QuitOutcome = { closed: [], kept: [], failed: [] };
  const live = [...herd.registry.agents.values()].filter((a) => a.state !== "closed");
  await Promise.all(
    live.map(async (rec) => {
      // A sheep whose machine does not answer in time is kept, never guessed idle and closed.
      const asked = await bounded(
        herd.exclusive(rec.agentId, () => inFlight(herd, rec)),
        herd.clock,
        herd.clock.now() + QUIT_LOOK_MS,
      );
      const kept = asked
        ? asked.value
        : {
            agentId: rec.agentId,
            label: rec.label,
            working: pendingPrompts(herd, rec).map((p) => p.promptId),
            unreceived: [],
            unread: `its machine did not answer within ${QUIT_LOOK_MS / 1000} s`,
          };
      if (kept) {
        out.kept.push(kept);
        return;
      }
      try {
        if (!(await bounded(close(herd, rec.agentId), herd.clock, herd.clock.now() + QUIT_LOOK_MS)))
          throw new Error(`its machine did not answer within ${QUIT_LOOK_MS / 1000} s`);
        out.closed.push(rec.agentId);
      } catch (e) {
        out.failed.push({ agentId: rec.agentId, label: rec.label, error: errorText(e) });
      }
    }),
  );
  // Written through before the process goes: the next shepherd adopts exactly these records.
  await herd.persist();
  return out;
}
