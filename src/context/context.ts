/** What every tool call and /shepherd subcommand runs with: the composed shepherd, the settings, where it stands, trust. */
import type { Shepherd } from "../core/shepherd.ts";
import type { HostTable } from "../hosts/table.ts";
import type { Edge } from "../ports/types.ts";
import type { Settings } from "../settings.ts";
import type { TrustContext } from "./trust.ts";

export interface DispatchContext {
  shepherd: Shepherd;
  settings: Settings;
  cwd: string;
  agentDir: string;
  bundledDir: string;
  /** The machines of the `hosts` setting; absent where nothing was composed with them (tests of the edges). */
  hosts?: HostTable;
  trust: Omit<TrustContext, "allowWithoutUI" | "userConfirms">;
  signal?: AbortSignal;
  onProgress?: (text: string, details: Record<string, unknown>) => void;
  /** A /shepherd subcommand: what it returns is shown to a person, not given to the model (see WaitOptions.byPerson). */
  byPerson?: boolean;
  /** Where the call came from (the model's tool when absent): told in every audit event and kept on each prompt. */
  edge?: Edge;
}
