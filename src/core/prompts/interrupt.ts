/**
 * Stopping a sheep's running turn without closing it: pi's own abort (what Escape in its editor
 * does), delivered as a file like every prompt. The prompt then settles as the sheep reports it,
 * `cancelled`; follow-ups queued behind it go on in order, and the sheep stays for the next prompt.
 */
import { errorText, ShepherdError } from "../../domain/errors.ts";
import { newId, type AgentId } from "../../domain/ids.ts";
import type { Herd } from "../herd/herd.ts";
import { findRecord } from "../herd/owners.ts";
import { activePrompt } from "./ledger.ts";

export interface InterruptOutcome {
  agentId: string;
  /** The prompt whose turn is aborted: it settles `cancelled`. */
  promptId: string;
  interruptId: string;
}

export async function interrupt(herd: Herd, agentId: AgentId): Promise<InterruptOutcome> {
  const rec = await findRecord(herd, agentId);
  return herd.audited("interrupt", rec, () =>
    herd.exclusive(rec.agentId, async () => {
      if (herd.registry.agents.get(rec.agentId) !== rec) throw herd.registry.unknownAgent(rec.agentId);
      if (rec.state === "closed" || rec.state === "exited") {
        throw new ShepherdError(
          "agent_closed",
          `sheep ${rec.agentId} (${rec.label}) ${rec.state === "closed" ? "is closed" : "has exited"}; nothing runs there.`,
        );
      }
      const active = activePrompt(herd, rec);
      if (!active) throw new ShepherdError("not_working", `sheep ${rec.agentId} (${rec.label}) runs no prompt now; there is nothing to interrupt.`);
      const interruptId = newId("interrupt");
      try {
        await herd.opts.files.submit(rec.agentId, { kind: "interrupt", interruptId, target: active.promptId });
      } catch (e) {
        throw new ShepherdError("runtime_error", `could not deliver the interrupt to ${rec.agentId}: ${errorText(e)}`);
      }
      herd.audit({ event: "interrupt", agentId: rec.agentId, label: rec.label, promptId: active.promptId });
      return { agentId: rec.agentId, promptId: active.promptId, interruptId };
    }),
  );
}
