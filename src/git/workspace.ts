/** The workspace port on git: evidence snapshots, worktrees per sheep, landing and syncing. */
import type {
  BranchState,
  Baseline,
  Diffstat,
  IsolateRequest,
  MarkedWorktree,
  Isolated,
  Landed,
  Synced,
  Workspace,
  Worktree,
  WorktreeState,
} from "../ports/workspace.ts";
import { branchState } from "./branch-state.ts";
import { evidenceDiff } from "./diff.ts";
import { land } from "./land.ts";
import { readMarks } from "./marks.ts";
import { Git } from "./run.ts";
import { headCommit, snapshotTree, workTreeRoot } from "./snapshot.ts";
import { sync, unmergedPaths } from "./sync.ts";
import { addWorktree, inspectWorktree, removeWorktree } from "./worktree.ts";

export interface GitWorkspaceOptions {
  env?: NodeJS.ProcessEnv;
  /** Where worktrees are made: a private directory outside any checkout (<state dir>/worktrees). */
  worktreesDir: string;
}

export class GitWorkspace implements Workspace {
  private readonly git: Git;

  constructor(private readonly o: GitWorkspaceOptions) {
    this.git = new Git(o.env);
  }

  async baseline(cwd: string): Promise<Baseline | undefined> {
    const root = await workTreeRoot(this.git, cwd);
    if (!root) return undefined;
    const takenAt = new Date().toISOString();
    const commit = await headCommit(this.git, root);
    const tree = await snapshotTree(this.git, root);
    return { root, ...(commit ? { commit } : {}), tree, takenAt };
  }

  async diff(baseline: Baseline, o: { patchPath: string; inlineLines: number }): Promise<Diffstat> {
    const afterAt = new Date().toISOString();
    const afterCommit = await headCommit(this.git, baseline.root);
    const after = await snapshotTree(this.git, baseline.root);
    return evidenceDiff(this.git, baseline, { tree: after, at: afterAt, ...(afterCommit ? { commit: afterCommit } : {}) }, o);
  }

  isolate(o: IsolateRequest): Promise<Isolated> {
    return addWorktree(this.git, { ...o, worktreesDir: this.o.worktreesDir });
  }

  inspect(wt: Worktree): Promise<WorktreeState> {
    return inspectWorktree(this.git, wt);
  }

  remove(wt: Worktree): Promise<void> {
    return removeWorktree(this.git, wt);
  }

  land(wt: Worktree, o: { squash: boolean; label: string; message?: string }): Promise<Landed> {
    return land(this.git, wt, o);
  }

  sync(wt: Worktree, o: { label: string }): Promise<Synced> {
    return sync(this.git, wt, o);
  }

  conflicts(wt: Worktree): Promise<string[]> {
    return unmergedPaths(this.git, wt.path);
  }

  branchState(wt: Worktree): Promise<BranchState> {
    return branchState(this.git, wt);
  }

  marked(): Promise<MarkedWorktree[]> {
    return readMarks(this.o.worktreesDir);
  }
}
