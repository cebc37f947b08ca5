/**
 * The shepherd's working parts: composing it, running a tool call or a /shepherd subcommand, the
 * doctor, the audit log, completions and what the session handlers push. pi's TypeScript loader
 * takes about a second for this graph, so it is imported on first need (lazy-parts.ts), never at
 * pi's start: every pi with the package installed loads the entry, most never shepherd.
 */
export { discoverAgents } from "../src/agents/discover.js";
export { completeShepherdArgs } from "../src/command/complete.js";
export { runShepherdCommand } from "../src/command/run.js";
export { liveSheep, resumableSheep } from "../src/command/target.js";
export { auditTrail, composeShepherd, doctor, packageRoot, processOwner } from "../src/compose.js";
export { readAudit } from "../src/protocol/audit-log.js";
export { readResumeCards } from "../src/protocol/resume-card.js";
export { poolDefinitions } from "../src/tool/definitions.js";
export { runCommand, runToolCall } from "../src/tool/entry.js";
export { noticeText } from "../src/tool/format.js";
export { pushMessage } from "../src/tool/push-text.js";
