// The command table: herdr's fixed response ids and which commands are silent on success.
import * as agent from "./agent.mjs";
import * as layout from "./layout.mjs";
import * as pane from "./pane.mjs";

/**
 * @typedef {{ json?: object, text?: string, rawError?: string, exit?: number }} Outcome
 * @typedef {{ id: string, run: (ctx: any, args: string[]) => Outcome }} Command
 */

/** @type {Record<string, Command>} */
export const COMMANDS = {
  "workspace create": { id: "cli:workspace:create", run: layout.workspaceCreate },
  "workspace list": { id: "cli:workspace:list", run: layout.workspaceList },
  "workspace get": { id: "cli:workspace:get", run: layout.workspaceGet },
  "workspace close": { id: "cli:workspace:close", run: layout.workspaceClose },
  "tab create": { id: "cli:tab:create", run: layout.tabCreate },
  "tab list": { id: "cli:tab:list", run: layout.tabList },
  "tab get": { id: "cli:tab:get", run: layout.tabGet },
  "tab close": { id: "cli:tab:close", run: layout.tabClose },
  "pane split": { id: "cli:pane:split", run: layout.paneSplit },
  "pane close": { id: "cli:pane:close", run: layout.paneClose },
  "pane rename": { id: "cli:pane:rename", run: pane.paneRename },
  "pane get": { id: "cli:pane:get", run: pane.paneGet },
  "pane list": { id: "cli:pane:list", run: pane.paneList },
  "pane current": { id: "cli:pane:current", run: pane.paneCurrent },
  "pane read": { id: "cli:pane:read", run: pane.paneRead },
  // Silent commands report errors under the generic request id.
  "pane run": { id: "cli:request", run: pane.paneRun },
  "pane send-text": { id: "cli:request", run: pane.paneSendText },
  "pane send-keys": { id: "cli:request", run: pane.paneSendKeys },
  "pane report-agent": { id: "cli:request", run: pane.paneReportAgent },
  "agent get": { id: "cli:agent:get", run: agent.agentGet },
  "agent list": { id: "cli:agent:list", run: agent.agentList },
  "agent prompt": { id: "cli:agent:prompt", run: agent.agentPrompt },
};
