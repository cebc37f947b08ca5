/** The workspace port over a remote host's agent: git runs there, on the remote checkout, with the same guards. */
import { ShepherdError } from "../../domain/errors.ts";
import type { BranchState, Baseline, Diffstat, IsolateRequest, Isolated, Landed, Synced, Workspace, Worktree, WorktreeState } from "../../ports/workspace.ts";
import type { RemoteCall } from "./call.ts";
import { ask } from "./wire/method.ts";
import { WORKSPACE_WIRE as W } from "./wire/workspace.ts";

export class RemoteWorkspace implements Workspace {
  constructor(
    private readonly remote: RemoteCall,
    private readonly host: string,
  ) {}

  baseline(cwd: string): Promise<Baseline | undefined> {
    return ask(this.remote, this.host, W.baseline, cwd);
  }

  async diff(b: Baseline, o: { patchPath: string; inlineLines: number }): Promise<Diffstat> {
    const d = await ask<Diffstat, [Baseline, { patchPath: string; inlineLines: number }]>(this.remote, this.host, W.diff, b, o);
    // The patch is where it was asked to be written: an answer naming another path would send readers elsewhere.
    if (d.patchPath !== o.patchPath)
      throw new ShepherdError(
        "protocol_error",
        `host "${this.host}" answered ws.diff with a patch at a path it was not asked for; deploy this shepherd's bundle there again.`,
      );
    return d;
  }

  isolate(o: IsolateRequest): Promise<Isolated> {
    return ask(this.remote, this.host, W.isolate, o);
  }

  inspect(wt: Worktree): Promise<WorktreeState> {
    return ask(this.remote, this.host, W.inspect, wt);
  }

  async remove(wt: Worktree): Promise<void> {
    await ask(this.remote, this.host, W.remove, wt);
  }

  land(wt: Worktree, o: { squash: boolean; label: string; message?: string }): Promise<Landed> {
    return ask(this.remote, this.host, W.land, wt, o);
  }

  sync(wt: Worktree, o: { label: string }): Promise<Synced> {
    return ask(this.remote, this.host, W.sync, wt, o);
  }

  conflicts(wt: Worktree): Promise<string[]> {
    return ask(this.remote, this.host, W.conflicts, wt);
  }

  branchState(wt: Worktree): Promise<BranchState | undefined> {
    return ask(this.remote, this.host, W.branchState, wt);
  }
}
