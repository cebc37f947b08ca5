/**
 * Worktrees of ours that no record knows (a shepherd killed while it started an isolated sheep
 * left the worktree and its branch): reported with the command that cleans them. Read only.
 */
import { join } from "node:path";
import { readMarks } from "../git/marks.ts";
import type { AgentRecord } from "../ports/types.ts";
import { plain } from "./config.ts";
import { pass, warn, type Check } from "./types.ts";

export async function worktreeChecks(o: { stateDir: string; ownerAlive(owner: string): boolean }, records: Iterable<AgentRecord>): Promise<Check[]> {
  const marks = await readMarks(join(o.stateDir, "worktrees"));
  const held = new Set<string>();
  for (const r of records) if (r.worktree && r.worktree.host === undefined) held.add(r.worktree.path);
  // A maker that still runs may be recording its sheep right now.
  const orphans = marks.filter((m) => !held.has(m.worktree.path) && !o.ownerAlive(m.owner));
  if (orphans.length === 0) return [pass("orphan worktrees", marks.length ? `none among ${marks.length} marked worktrees` : "none")];
  return orphans.map((m) =>
    warn(
      "orphan worktree",
      `${plain(m.worktree.path)} on branch ${plain(m.worktree.branch)} of ${plain(m.worktree.repoRoot)} was made for ${plain(m.agentId)}, which no record knows (a start cut short)`,
      "/shepherd prune (with --force if it holds work you do not want)",
    ),
  );
}
