/**
 * The sheep side of the protocol as the core sees it: a private place per sheep where the launch
 * spec, prompts, results and the sheep's own reports live. The file implementation is
 * src/protocol; unit tests use an in-memory one.
 */
import type { AgentDefinition, Usage } from "../core/types.js";

export interface PrepareRequest {
  agentId: string;
  definition: AgentDefinition;
  cwd: string;
  model?: string;
}

export interface PreparedSheep {
  sessionPath: string;
  /** Fixed launcher command: absolute paths chosen by the package, nothing from the user. */
  launcherArgv: string[];
}

export interface SheepSnapshot {
  ready?: { pid: number; readyAt: string; sessionPath?: string };
  exited?: { code: number | null; signal: string | null; at: string };
  /** Label of the question or approval the sheep waits on, when it does. */
  blocked?: string;
}

export interface SheepResult {
  promptId: string;
  status: "completed" | "failed" | "cancelled";
  text: string;
  stopReason?: string;
  errorMessage?: string;
  usage?: Usage;
  model?: string;
  sessionPath?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface SheepHost {
  prepare(req: PrepareRequest): Promise<PreparedSheep>;
  snapshot(agentId: string): Promise<SheepSnapshot>;
  result(agentId: string, promptId: string): Promise<SheepResult | undefined>;
  /** Delivers a prompt to the sheep's inbox; returns once it is durably there. */
  submit(agentId: string, promptId: string, text: string): Promise<void>;
  /** Calls onChange whenever anything the sheep reports may have changed. */
  subscribe(agentId: string, onChange: () => void): () => void;
  /** A private file for the patch of a prompt's evidence (its directory made); kept after close. */
  evidencePath(agentId: string, promptId: string): Promise<string>;
  /** Removes the sheep's private files except its session file and its evidence. */
  cleanup(agentId: string): Promise<void>;
}
