/**
 * The shepherd's working parts: composing it, running a tool call or a /shepherd subcommand, the
 * doctor, the audit log, completions and what the session handlers push. pi's TypeScript loader
 * takes about a second for this graph, so it is imported on first need (lazy-parts.ts), never at
 * pi's start: every pi with the package installed loads the entry, most never shepherd.
 */
export { discoverAgents } from "../src/definitions/discover.ts";
export { completeShepherdArgs } from "../src/command/complete.ts";
export { panelReplyText, personNoteText } from "../src/command/person-text.ts";
export { runShepherdCommand } from "../src/command/run.ts";
export { liveSheep, resumableSheep } from "../src/command/target.ts";
export { trustCommand } from "../src/command/trust.ts";
export { auditTrail, composeShepherd, doctor, packageRoot, processOwner } from "../src/compose.ts";
export { readAudit } from "../src/stores/audit-log.ts";
export { readResumeCards } from "../src/protocol/resume-card.ts";
export { poolDefinitions } from "../src/context/definition-picker.ts";
export { runCommand, runToolCall } from "../src/edge/entry.ts";
export { heldText, leftoverText, noticeText, reattachText } from "../src/texts/format.ts";
export { pushMessage } from "../src/edge/push-text.ts";
export { quitText } from "../src/texts/quit.ts";
export { PanelAuth } from "../src/panel/auth.ts";
export { AuthFile } from "../src/panel/auth-file.ts";
export { stablePanelPort, wantedPanelPort } from "../src/panel/stable-port.ts";
export { ShepherdRegistry } from "../src/panel/registry.ts";
export { agentDirOf } from "../src/settings.ts";
export { PanelServer } from "../src/panel/server.ts";
export { panelLostText, panelOffText, panelOnText, panelPortTakenText, panelUrlText } from "../src/panel/text.ts";
