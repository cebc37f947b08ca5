/**
 * The few fields of herdr's PaneInfo / WorkspaceInfo / AgentInfo records that the adapter
 * reads, checked at the boundary so a surprising answer fails loudly instead of later.
 */
import { isRecord } from "../../domain/guards.ts";
import type { HerdrResult } from "./cli.ts";
import { HerdrCommandError } from "./errors.ts";

export interface PaneRecord {
  pane_id: string;
  workspace_id: string;
  tab_id: string;
  label?: string;
  agent_status?: string;
}

export function paneRecord(v: unknown, where: string): PaneRecord {
  if (isRecord(v) && typeof v.pane_id === "string" && typeof v.workspace_id === "string" && typeof v.tab_id === "string") {
    return v as unknown as PaneRecord;
  }
  throw malformed(where, "a pane record");
}

export function paneList(result: HerdrResult, where: string): PaneRecord[] {
  if (!Array.isArray(result.panes)) throw malformed(where, "a pane list");
  return result.panes.map((p) => paneRecord(p, where));
}

export function workspaceId(result: HerdrResult, where: string): string {
  const ws = result.workspace;
  if (isRecord(ws) && typeof ws.workspace_id === "string") return ws.workspace_id;
  throw malformed(where, "a workspace record");
}

export function agentStatusOf(result: HerdrResult, where: string): string {
  const agent = result.agent;
  if (isRecord(agent) && typeof agent.agent_status === "string") return agent.agent_status;
  throw malformed(where, "an agent record");
}

function malformed(where: string, what: string): HerdrCommandError {
  return new HerdrCommandError("runtime_error", "unexpected_output", `herdr ${where} answered without ${what}; check that herdr is 0.7.5 or newer.`);
}
