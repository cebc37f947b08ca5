/**
 * An in-memory workspace for unit tests of the core: a "repository" is any cwd under /repo, and
 * the test decides what a worktree holds and when a diff finishes.
 */
import { ShepherdError } from "../../src/domain/errors.ts";
import type {
  BranchState,
  Baseline,
  Diffstat,
  IsolateRequest,
  Isolated,
  Landed,
  Synced,
  Workspace,
  Worktree,
  WorktreeState,
} from "../../src/ports/workspace.ts";

const tree = (n: number) => n.toString(16).padStart(40, "0");

export class MemoryWorkspace implements Workspace {
  readonly calls: string[] = [];
  /** Per worktree path: what inspect reports. */
  readonly states = new Map<string, WorktreeState>();
  readonly removed: string[] = [];
  /** When set, diffs wait for it: lets a test hold a settlement half-way. */
  gate: Promise<void> | undefined;
  failBaseline = false;
  private n = 0;

  /** Working trees are the cwds under these directories. */
  constructor(private readonly repos: readonly string[] = ["/repo", "/wt"]) {}

  private inRepo(cwd: string): boolean {
    return this.repos.some((r) => cwd === r || cwd.startsWith(`${r}/`));
  }

  async baseline(cwd: string): Promise<Baseline | undefined> {
    this.calls.push(`baseline ${cwd}`);
    if (!this.inRepo(cwd)) return undefined;
    if (this.failBaseline) throw new Error("[git_error] git add failed");
    return { root: cwd, commit: tree(1), tree: tree(++this.n), takenAt: new Date(0).toISOString() };
  }

  async diff(b: Baseline, o: { patchPath: string; inlineLines: number }): Promise<Diffstat> {
    this.calls.push(`diff ${b.tree}`);
    await this.gate;
    return {
      baseline: b,
      after: tree(++this.n),
      afterCommit: tree(1),
      afterAt: new Date(0).toISOString(),
      files: [{ path: "a.txt", status: "modified", insertions: 2, deletions: 1 }],
      fileCount: 1,
      insertions: 2,
      deletions: 1,
      patchPath: o.patchPath,
      patch: "diff --git a/a.txt b/a.txt\n",
      truncated: false,
    };
  }

  async isolate(o: IsolateRequest): Promise<Isolated> {
    this.calls.push(`isolate ${o.cwd}${o.from ? ` from ${o.from.path}` : ""}`);
    if (!this.inRepo(o.cwd) || o.cwd.startsWith("/wt")) throw new ShepherdError("not_a_repository", "isolate needs a git repository");
    const path = `/wt/worktrees/${o.agentId}`;
    this.states.set(path, { exists: true, uncommitted: [], unlanded: false });
    return { worktree: { path, branch: `shepherd/${o.agentId.slice(2)}`, repoRoot: "/repo", base: tree(1), leftBehind: 0 }, cwd: path };
  }

  /** Per worktree path: what branchState reports; absent: the workspace cannot tell (as an older host's). */
  readonly branches = new Map<string, BranchState>();

  async branchState(wt: Worktree): Promise<BranchState | undefined> {
    this.calls.push(`branchState ${wt.path}`);
    return this.branches.get(wt.path);
  }

  async inspect(wt: Worktree): Promise<WorktreeState> {
    return this.states.get(wt.path) ?? { exists: false, uncommitted: [], unlanded: false };
  }

  async remove(wt: Worktree): Promise<void> {
    this.calls.push(`remove ${wt.path}`);
    this.removed.push(wt.path);
    this.states.delete(wt.path);
  }

  async land(wt: Worktree, o: { squash: boolean; label: string; message?: string }): Promise<Landed> {
    this.calls.push(`land ${wt.path} ${o.squash ? "squash" : "merge"}${o.message !== undefined ? ` ${JSON.stringify(o.message)}` : ""}`);
    return { landed: true, branch: wt.branch, into: "main", commit: tree(99), squash: o.squash, files: [], fileCount: 0, insertions: 0, deletions: 0 };
  }

  /** Per worktree path: the conflicts a sync leaves (and conflicts() reports until cleared). */
  readonly conflicted = new Map<string, string[]>();

  async sync(wt: Worktree, o: { label: string }): Promise<Synced> {
    this.calls.push(`sync ${wt.path} ${o.label}`);
    const conflicts = this.conflicted.get(wt.path) ?? [];
    return {
      synced: true,
      from: "main",
      fromCommit: tree(1),
      branch: wt.branch,
      path: wt.path,
      committedWork: false,
      conflicts,
      files: [],
      fileCount: 0,
      insertions: 0,
      deletions: 0,
    };
  }

  async conflicts(wt: Worktree): Promise<string[]> {
    return this.conflicted.get(wt.path) ?? [];
  }

  /** Makes the worktree hold uncommitted work. */
  dirty(path: string, paths = ["a.txt"]) {
    this.states.set(path, { exists: true, uncommitted: paths, unlanded: false });
  }
}
