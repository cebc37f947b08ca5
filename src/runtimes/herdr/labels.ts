/**
 * Labels are user text that travels as herdr CLI arguments. herdr treats `-h`/`--help`
 * anywhere as a help request and other dash-words as options, and joins trailing words
 * with spaces, so labels are flattened to one dash-free line before they are passed.
 * The sheep's pane label also carries its agent id: that mark is how `close` checks that
 * a pane is ours, since herdr offers no other per-pane storage readable from the CLI.
 */

const MAX_LABEL = 60;

/**
 * The source of every state report about a sheep's pane (`pane report-agent --source`): the sheep's
 * own, or the shepherd's for a sandboxed sheep; never both for one pane.
 */
export const REPORT_SOURCE = "pi-shepherd";

export function cliSafeLabel(label: string, fallback: string): string {
  const flat = label
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^-+\s*/, "")
    .slice(0, MAX_LABEL)
    .trim();
  return flat || fallback;
}

export function markedPaneLabel(label: string, agentId: string): string {
  return `${cliSafeLabel(label, "sheep")} [${agentId}]`;
}

export function carriesMark(paneLabel: unknown, agentId: string): boolean {
  return typeof paneLabel === "string" && paneLabel.endsWith(`[${agentId}]`);
}

/** The agent id a pane label carries as its mark, if any. */
export function markOf(paneLabel: unknown): string | undefined {
  if (typeof paneLabel !== "string") return undefined;
  return /\[(a_[0-9a-z]{10})\]$/.exec(paneLabel)?.[1];
}
