import type { AgentId, PromptId } from "../../src/domain/ids.ts";
import type { Shepherd } from "../../src/core/shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { resultWrittenAt } from "./answers.ts";
import { epochNow } from "./clock.ts";
import type { ModelProcess } from "./model.ts";

export interface HerdRound {
  n: number;
  tailMs: number;
  /** The part of the tail after the last sheep wrote its result: the shepherd's share. */
  afterLastResultMs: number;
  overlapped: boolean;
  /** Spread of the sheep's last bytes: how close together the answers landed. */
  answerSpreadMs: number;
}

/** The same delayed task to every sheep, then one wait for all of them. */
export async function herdRound(shepherd: Shepherd, model: ModelProcess, agentDir: string, ids: AgentId[], tag: string, delayMs: number) {
  const prompts: { promptId: PromptId }[] = [];
  for (const [i, id] of ids.entries()) {
    prompts.push(await shepherd.prompt(id, directive({ reply: `${tag} ${i}`, delayMs, tag: `${tag}-${i}` })));
  }
  const items = await shepherd.wait(
    prompts.map((p) => p.promptId),
    { timeoutSec: 120 },
  );
  const returnedAt = epochNow();
  items.forEach((it, i) => {
    if (it.status !== "completed" || it.text !== `${tag} ${i}`) throw new Error(`herd sheep ${i} answered ${JSON.stringify(it)}`);
  });
  const entries = await Promise.all(ids.map((_, i) => model.entry(`${tag}-${i}`)));
  const lastBytes = entries.map((e) => e.lastByteAt!);
  const written = await Promise.all(ids.map((id, i) => resultWrittenAt(agentDir, id, prompts[i]!.promptId)));
  return {
    tailMs: returnedAt - Math.max(...lastBytes),
    afterLastResultMs: returnedAt - Math.max(...written),
    overlapped: Math.max(...entries.map((e) => e.receivedAt)) < Math.min(...lastBytes),
    answerSpreadMs: Math.max(...lastBytes) - Math.min(...lastBytes),
  };
}
