/** Handing a sheep a prompt: one unsettled prompt per sheep, delivered as a file, never typed. */
import { errorText, ShepherdError } from "./errors.js";
import { takeBaseline } from "./evidence.js";
import type { Herd } from "./herd.js";
import { newId } from "./ids.js";
import { activePrompt, refresh } from "./ledger.js";
import { findRecord } from "./persistence.js";
import type { AgentRecord, PromptRecord, SubmittedPrompt } from "./types.js";

export async function prompt(herd: Herd, agentId: unknown, message: unknown): Promise<SubmittedPrompt> {
  const rec = await findRecord(herd, agentId);
  if (typeof message !== "string" || message.length === 0) {
    throw new ShepherdError("invalid_params", "message must be a non-empty string.");
  }
  const bytes = Buffer.byteLength(message, "utf8");
  if (bytes > herd.opts.maxPromptBytes) {
    throw new ShepherdError(
      "invalid_params",
      `message is ${bytes} bytes; the limit is ${herd.opts.maxPromptBytes}. Put the material in a file and name the file in the prompt.`,
    );
  }
  // One operation on a sheep at a time: a close racing this prompt must not be undone by it.
  return herd.exclusive(rec.agentId, async () => {
    if (herd.registry.agents.get(rec.agentId) !== rec) throw herd.registry.unknownAgent(rec.agentId);
    refuseIfGone(rec);
    const snap = await refresh(herd, rec);
    const active = activePrompt(herd, rec);
    if (active) {
      throw new ShepherdError(
        "prompt_pending",
        `sheep ${rec.agentId} (${rec.label}) is still working on ${active.promptId}; wait for it before prompting again.`,
      );
    }
    // Where the multiplexer reports pi's end (tmux) there is no exit report to read, but a pi
    // that is not running answers no prompt either.
    if (snap.exited || snap.piGone) {
      rec.state = "exited";
      refuseIfGone(rec);
    }
    const promptId = newId("prompt");
    const submittedAt = new Date(herd.clock.now()).toISOString();
    const record: PromptRecord = { promptId, agentId: rec.agentId, submittedAt };
    herd.registry.prompts.set(promptId, record);
    rec.activePromptId = promptId;
    rec.state = "working";
    // Before the sheep can see the prompt: its work starts from this state of its working tree.
    await takeBaseline(herd, rec, record);
    try {
      await herd.opts.host.submit(rec.agentId, promptId, message);
    } catch (e) {
      herd.registry.prompts.delete(promptId);
      delete rec.activePromptId;
      rec.state = "idle";
      throw new ShepherdError("runtime_error", `could not deliver the prompt to ${rec.agentId}: ${errorText(e)}`);
    }
    await herd.persist();
    herd.audit({ event: "prompt", agentId: rec.agentId, label: rec.label, promptId, bytes });
    return { promptId, agentId: rec.agentId, submittedAt };
  });
}

function refuseIfGone(rec: AgentRecord): void {
  if (rec.state === "closed") {
    throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) is closed; start a new one.`);
  }
  if (rec.state === "exited") {
    throw new ShepherdError("agent_closed", `sheep ${rec.agentId} (${rec.label}) has exited; close it and start a new one.`);
  }
}
