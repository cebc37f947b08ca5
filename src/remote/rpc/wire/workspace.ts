/** The workspace port's wire: git runs on the far end's checkout (its GitWorkspace), asked by RemoteWorkspace. */
import type { Baseline, IsolateRequest, Workspace, Worktree } from "../../../ports/workspace.ts";
import { arrayOf, fields, type Guard, isString, isStrings, oneOf, optional } from "../shape.ts";
import { ignored, methodsOn, obj, str } from "./method.ts";

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

const count = Number.isSafeInteger as Guard;
const branchState = fields({
  exists: bool,
  branch: isString,
  into: isString,
  ahead: count,
  behind: count,
  conflicts: isStrings,
  uncommitted: count,
  worked: bool,
  landed: bool,
});

const method = methodsOn<Workspace>();
const wt = obj<Worktree>();

export const WORKSPACE_WIRE = {
  baseline: method("ws.baseline", [str], optional(baseline), (ws, cwd) => ws.baseline(cwd)),
  diff: method("ws.diff", [obj<Baseline>(), obj<{ patchPath: string; inlineLines: number }>()], diffstat, (ws, b, o) => ws.diff(b, o)),
  isolate: method("ws.isolate", [obj<IsolateRequest>()], isolated, (ws, o) => ws.isolate(o)),
  inspect: method("ws.inspect", [wt], state, (ws, w) => ws.inspect(w)),
  remove: method("ws.remove", [wt], ignored, (ws, w) => ws.remove(w)),
  land: method("ws.land", [wt, obj<{ squash: boolean; label: string; message?: string }>()], landed, (ws, w, o) => ws.land(w, o)),
  sync: method("ws.sync", [wt, obj<{ label: string }>()], synced, (ws, w, o) => ws.sync(w, o)),
  conflicts: method("ws.conflicts", [wt], isStrings, (ws, w) => ws.conflicts(w)),
  branchState: method("ws.branchState", [wt], optional(branchState), (ws, w) => ws.branchState?.(w) ?? Promise.resolve(undefined)),
};
