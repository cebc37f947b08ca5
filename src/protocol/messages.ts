/** The file formats that travel between the shepherd and a sheep. */
import type { SheepResult } from "../ports/sheep-host.js";

export interface InboxPrompt {
  promptId: string;
  text: string;
  submittedAt: string;
}

export interface StatusReport {
  pid: number;
  readyAt: string;
  sessionPath?: string;
  piVersion?: string;
  /** The pi program this sheep runs (its CLI script), for doctor and for tests of older pi. */
  piCli?: string;
  state: "idle" | "working";
  activePromptId?: string;
  /** Present while the sheep waits on a question or approval. */
  blocked?: string;
  updatedAt: string;
}

export interface ExitReport {
  code: number | null;
  signal: string | null;
  at: string;
}

/** What a sheep writes to its outbox: exactly what the core reads as a result. */
export type ResultFile = SheepResult;

export interface LaunchSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}
