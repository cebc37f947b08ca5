/** The workspace port over a remote host's agent: git runs there, on the remote checkout, with the same guards. */
import { ShepherdError } from "../../domain/errors.ts";
import type { Baseline, Diffstat, IsolateRequest, Isolated, Landed, Synced, Workspace, Worktree, WorktreeState } from "../../ports/workspace.ts";
import type { RemoteCall } from "./call.ts";
import { arrayOf, expect, fields, type Guard, isString, isStrings, oneOf, optional } from "./shape.ts";

const bool = oneOf(true, false);
const baseline = fields({ root: isString, tree: isString, takenAt: isString, commit: optional(isString) });
const files = arrayOf(fields({ path: isString, status: isString }));
const counts = { fileCount: Number.isSafeInteger, insertions: Number.isSafeInteger, deletions: Number.isSafeInteger } as Record<string, Guard>;
const diffstat = fields({ baseline, after: isString, afterAt: isString, files, patchPath: isString, patch: isString, truncated: bool, ...counts });
const worktree = fields({ path: isString, branch: isString, repoRoot: isString, base: isString, leftBehind: Number.isSafeInteger });
const isolated = fields({ worktree, cwd: isString });
const state = fields({ exists: bool, uncommitted: isStrings, unlanded: bool });
const landed = fields({ landed: bool, branch: isString, into: isString, squash: bool, files, ...counts });
const synced = fields({
  synced: bool,
  from: isString,
  fromCommit: isString,
  branch: isString,
  path: isString,
  committedWork: bool,
  conflicts: isStrings,
  files,
  ...counts,
});

export class RemoteWorkspace implements Workspace {
  constructor(
    private readonly remote: RemoteCall,
    private readonly host: string,
  ) {}

  private async ask<T>(method: string, params: unknown[], guard: Guard): Promise<T> {
    return expect<T>(await this.remote.call(method, params), guard, method, this.host);
  }

  baseline(cwd: string): Promise<Baseline | undefined> {
    return this.ask("ws.baseline", [cwd], optional(baseline));
  }

  async diff(b: Baseline, o: { patchPath: string; inlineLines: number }): Promise<Diffstat> {
    const d = await this.ask<Diffstat>("ws.diff", [b, o], diffstat);
    // The patch is where it was asked to be written: an answer naming another path would send readers elsewhere.
    if (d.patchPath !== o.patchPath)
      throw new ShepherdError(
        "protocol_error",
        `host "${this.host}" answered ws.diff with a patch at a path it was not asked for; deploy this shepherd's bundle there again.`,
      );
    return d;
  }

  isolate(o: IsolateRequest): Promise<Isolated> {
    return this.ask("ws.isolate", [o], isolated);
  }

  inspect(wt: Worktree): Promise<WorktreeState> {
    return this.ask("ws.inspect", [wt], state);
  }

  async remove(wt: Worktree): Promise<void> {
    await this.remote.call("ws.remove", [wt]);
  }

  land(wt: Worktree, o: { squash: boolean; label: string; message?: string }): Promise<Landed> {
    return this.ask("ws.land", [wt, o], landed);
  }

  sync(wt: Worktree, o: { label: string }): Promise<Synced> {
    return this.ask("ws.sync", [wt, o], synced);
  }

  conflicts(wt: Worktree): Promise<string[]> {
    return this.ask("ws.conflicts", [wt], isStrings);
  }
}
