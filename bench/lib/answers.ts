import type { AgentId } from "../../src/domain/ids.ts";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Shepherd } from "../../src/core/shepherd.ts";
import { sheepDir } from "../../src/protocol/layout.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { epochNow } from "./clock.ts";
import type { ModelProcess } from "./model.ts";

/** When the sheep wrote the result (finishedAt, ms): file timestamps are too coarse for this. */
export async function resultWrittenAt(agentDir: string, agentId: string, promptId: string): Promise<number> {
  const file = JSON.parse(await readFile(join(sheepDir(agentDir, agentId), "outbox", `${promptId}.json`), "utf8")) as { finishedAt: string };
  return Date.parse(file.finishedAt);
}

/** One prompt and its wait on the core, checked, with what the scripted model logged for it. */
export async function promptAndWait(shepherd: Shepherd, model: ModelProcess, agentId: AgentId, tag: string, delayMs: number) {
  const reply = `answer ${tag}`;
  const t0 = performance.now();
  const p = await shepherd.prompt(agentId, directive({ reply, delayMs, tag }));
  const promptMs = performance.now() - t0;
  const [item] = await shepherd.wait([p.promptId], { timeoutSec: 60 });
  const waitReturnedAt = epochNow();
  if (item?.status !== "completed" || item.text !== reply) throw new Error(`sheep answered ${JSON.stringify(item)}`);
  const entry = await model.entry(tag);
  return { promptId: p.promptId, promptMs, waitReturnedAt, lastByteAt: entry.lastByteAt! };
}
