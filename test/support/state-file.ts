/** What a shepherd's own state file says of its sheep, read by tests as a person would read it. */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface RecordedSheep {
  agentId: string;
  label: string;
  paneId: string;
  state: string;
  owner: string;
  activePromptId?: string;
}

/** The live sheep with this label, as `<agentDir>/pi-shepherd/state.json` records it; fails when there is none. */
export async function recordedSheep(agentDir: string, label: string): Promise<RecordedSheep> {
  const state = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "state.json"), "utf8")) as { agents: RecordedSheep[] };
  const sheep = state.agents.find((a) => a.label === label && a.state !== "closed");
  assert.ok(sheep, `${label} is recorded`);
  return sheep;
}
