/** Evidence and worktrees in words, for the model's texts and for what a person sees. */
import type { Evidence } from "../ports/types.ts";
import type { FileChange, Worktree } from "../ports/workspace.ts";

/** Files listed inline; the rest are counted (and in the patch on disk). */
const LISTED = 50;

const short = (id: string | undefined) => (id ? id.slice(0, 10) : "no commit");

/** A path as one line: a newline or an escape in a file name must not reshape the text around it. */
export function plainPath(path: string): string {
  return /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(path) ? JSON.stringify(path) : path;
}

/** Text from a repository shown on a terminal: control characters (but tabs and newlines) become visible. */
export function visibleControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `in 4 files` */
export function inFiles(n: number): string {
  return `in ${n} file${n === 1 ? "" : "s"}`;
}

/** `+12 −3 in 4 files` */
export function changeSummary(e: { insertions: number; deletions: number; fileCount: number }): string {
  return `+${e.insertions} −${e.deletions} ${inFiles(e.fileCount)}`;
}

/** `added      passwd-link → /etc/passwd (symlink)`: a link says where it points, never reads as a file. */
export function fileLine(f: FileChange): string {
  if (f.link !== undefined) return `${f.status.padEnd(10)} ${plainPath(f.path)} → ${plainPath(f.link)} (symlink)`;
  const counts = f.binary ? "binary" : `+${f.insertions} −${f.deletions}`;
  return `${f.status.padEnd(10)} ${plainPath(f.path)} ${counts}`;
}

export function fileLines(files: readonly FileChange[], total: number, indent = "  "): string[] {
  const lines = files.slice(0, LISTED).map((f) => indent + fileLine(f));
  if (total > Math.min(files.length, LISTED)) lines.push(`${indent}… and ${total - Math.min(files.length, LISTED)} more files (all in the patch)`);
  return lines;
}

/** Where the whole patch is: a remote sheep's is a file on its host. */
export function patchPlace(e: Evidence): string {
  return e.baseline.host === undefined ? e.patchPath : `${e.patchPath} on host ${e.baseline.host}`;
}

/** The evidence block of a result: what changed, from where, and the patch (bounded) unless only the stat is asked for. */
export function evidenceText(e: Evidence, o: { patch: boolean }): string {
  const since = `since ${short(e.baseline.commit)} + the working tree at ${e.baseline.takenAt}`;
  if (e.fileCount === 0) return `Evidence: no file changed during this prompt (${since}).`;
  const lines = [`Evidence: ${changeSummary(e)} during this prompt (${since}):`, ...fileLines(e.files, e.fileCount)];
  if (e.shared) lines.push("This sheep works in your checkout, not a worktree of its own: the diff includes any edit made there meanwhile, yours too.");
  if (o.patch) {
    lines.push(e.truncated ? `Patch (the first lines; all of it is in ${patchPlace(e)}):` : `Patch (also in ${patchPlace(e)}):`, e.patch.trimEnd());
  } else {
    lines.push(`Patch: ${patchPlace(e)}`);
  }
  return lines.join("\n");
}

/** Evidence, or why there is none, for an item that may carry either. */
export function evidenceBlock(i: { evidence?: Evidence; evidenceError?: string }, o: { patch: boolean }): string | undefined {
  if (i.evidence) return evidenceText(i.evidence, o);
  if (i.evidenceError) return `Evidence: none, ${i.evidenceError}`;
  return undefined;
}

export function worktreeText(wt: Worktree): string {
  return `worktree ${wt.path} on branch ${wt.branch} (from ${short(wt.base)})`;
}
