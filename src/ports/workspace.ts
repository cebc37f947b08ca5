/**
 * The workspace port: what the core needs from version control to show evidence of a sheep's
 * work and to give a sheep a checkout of its own. The adapter is src/git; the core never learns
 * how git is asked.
 */

/** The state of a working tree when a prompt was submitted. */
export interface Baseline {
  /** The machine of the working tree (stamped by the host router); absent: this machine. */
  host?: string;
  /** The top directory of the working tree the snapshot covers. */
  root: string;
  /** HEAD when it was taken; absent in a repository with no commit yet. */
  commit?: string;
  /** A tree object holding every tracked and untracked file as it was (ignored files left out). */
  tree: string;
  takenAt: string;
}

export type FileStatus = "added" | "modified" | "deleted" | "typechange";

export interface FileChange {
  path: string;
  status: FileStatus;
  insertions: number;
  deletions: number;
  /** Binary content: git counts no lines for it. */
  binary?: true;
  /** A symbolic link after the change: where it points (as stored, unresolved). */
  link?: string;
}

/** What changed in a working tree between a baseline and a later snapshot. */
export interface Diffstat {
  baseline: Baseline;
  /** The tree of the working tree at the end, HEAD then, and when. */
  after: string;
  afterCommit?: string;
  afterAt: string;
  /** Bounded (see MAX_EVIDENCE_FILES); fileCount and the totals always count every file. */
  files: FileChange[];
  fileCount: number;
  insertions: number;
  deletions: number;
  /** The whole patch (git's binary patch format), in the sheep's private directory. */
  patchPath: string;
  /** The patch's first lines, at most the inline limit. */
  patch: string;
  /** The file list or the inline patch is shorter than the whole; the file at patchPath has it all. */
  truncated: boolean;
}

export const MAX_EVIDENCE_FILES = 500;

/** An object id, SHA-1 or SHA-256: ids read back from state files must never become options. */
export const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The only branch names the shepherd makes, and so the only ones it acts on. */
export const WORKTREE_BRANCH = /^shepherd\/[A-Za-z0-9_-]{1,80}$/;

/** A sheep's own checkout: a worktree of the user's repository on a branch of its own. */
export interface Worktree {
  /** The machine it is on (stamped by the host router); absent: this machine. */
  host?: string;
  path: string;
  branch: string;
  /** The user's checkout it was made from; land merges into the branch checked out there. */
  repoRoot: string;
  /** The commit it started from: the user's HEAD then, or a commit of the work of the worktree it continues. */
  base: string;
  /** Files with uncommitted changes in the user's checkout when it was made: those are not in it. */
  leftBehind: number;
}

export interface IsolateRequest {
  /** The machine of cwd (a name of the `hosts` setting); absent: this machine. */
  host?: string;
  cwd: string;
  agentId: string;
  label: string;
  /** Start from this worktree's work (a chain's step before) instead of the user's HEAD; it is not changed. */
  from?: Worktree;
  /** The shepherd making it (its owner string), kept in the worktree's mark: see leftovers. */
  owner?: string;
}

/** A worktree of ours on this machine, as its mark says (see src/git/marks.ts). */
export interface MarkedWorktree {
  agentId: string;
  /** The shepherd that made it. */
  owner: string;
  worktree: Worktree;
}

export interface Isolated {
  worktree: Worktree;
  /** Where the sheep runs: the worktree's counterpart of the requested cwd. */
  cwd: string;
}

export interface WorktreeState {
  exists: boolean;
  /** Paths with uncommitted changes (tracked or untracked, not ignored), bounded. */
  uncommitted: string[];
  /** The branch holds work that landing would still bring into the user's checkout. */
  unlanded: boolean;
}

export interface Landed {
  /** False when the user's branch already holds everything the sheep did. */
  landed: boolean;
  branch: string;
  /** The user's branch that received it. */
  into: string;
  commit?: string;
  squash: boolean;
  /** The user's branch moved to the sheep's commit itself: no commit was made. */
  fastForward?: boolean;
  files: FileChange[];
  fileCount: number;
  insertions: number;
  deletions: number;
}

/** What a sync brought into a sheep's worktree from the branch checked out in the user's checkout. */
export interface Synced {
  /** False when the worktree already held everything of the user's branch. */
  synced: boolean;
  /** The user's branch (or `HEAD` on a detached checkout) and its commit that was merged in. */
  from: string;
  fromCommit: string;
  branch: string;
  path: string;
  /** The sheep's uncommitted files were made a commit on its branch first, so the merge could not touch them. */
  committedWork: boolean;
  /** Paths the merge left in conflict in the worktree (the merge stays in progress there); empty when clean. */
  conflicts: string[];
  /** What came in: the changes between the worktree before and after (for a conflicted merge, the index). */
  files: FileChange[];
  fileCount: number;
  insertions: number;
  deletions: number;
}

/** Where an isolated sheep's branch stands against the branch checked out in the user's checkout. */
export interface BranchState {
  /** The worktree is still on disk. */
  exists: boolean;
  branch: string;
  /** The user's branch it is measured against (`HEAD` on a detached checkout). */
  into: string;
  /** Commits on the sheep's branch that the user's branch lacks, and the other way round. */
  ahead: number;
  behind: number;
  /** Paths left in conflict in the worktree (a sync's merge in progress). */
  conflicts: string[];
  /** Files changed in the worktree and not yet committed (land takes them too). */
  uncommitted: number;
  /** The branch holds work of the sheep's (a commit past where it started, or uncommitted files). */
  worked: boolean;
  /** Everything the sheep did is in the user's branch: landing would bring nothing more. */
  landed: boolean;
}

export interface Workspace {
  /** A snapshot of the working tree around cwd, on the machine of agentId's sheep; undefined outside a git working tree. */
  baseline(cwd: string, agentId?: string): Promise<Baseline | undefined>;
  /** The changes since the baseline, the whole patch written to patchPath. */
  diff(baseline: Baseline, o: { patchPath: string; inlineLines: number }): Promise<Diffstat>;
  /**
   * A new worktree of cwd's repository on its own branch, at HEAD, or (`from`) at what another
   * worktree holds now, its uncommitted files included; throws [not_a_repository] outside git.
   */
  isolate(o: IsolateRequest): Promise<Isolated>;
  inspect(wt: Worktree): Promise<WorktreeState>;
  /** Removes the worktree and its branch, whatever they hold: the core decides whether that is allowed. */
  remove(wt: Worktree): Promise<void>;
  /**
   * Brings the sheep's work (its commits and its uncommitted files) into the branch checked out in
   * the user's checkout, only when that checkout is clean and the merge is; otherwise throws
   * [land_refused] naming the paths and changes nothing.
   */
  land(wt: Worktree, o: { squash: boolean; label: string; message?: string }): Promise<Landed>;
  /**
   * Merges the commit checked out in the user's checkout into the worktree's branch, in the
   * worktree only (the user's checkout, index and branches are not touched); conflicts are left
   * there, the merge in progress. Throws [sync_refused] when it cannot start, changing nothing.
   */
  sync(wt: Worktree, o: { label: string }): Promise<Synced>;
  /** Paths with unresolved merge conflicts in the worktree (a sync's, or the sheep's own merge); [] when none or gone. */
  conflicts(wt: Worktree): Promise<string[]>;
  /** Where the worktree's branch stands against the user's branch; read only. Undefined (or absent) where it cannot be told. */
  branchState?(wt: Worktree): Promise<BranchState | undefined>;
  /** Every worktree this machine's shepherds made that still has its mark (records or not). */
  marked?(): Promise<MarkedWorktree[]>;
}
