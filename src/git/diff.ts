/**
 * The changes between two trees as evidence: a file list with line counts, and the whole patch
 * written to a private file with only its first lines kept inline.
 */
import { randomBytes } from "node:crypto";
import { constants, type ReadStream } from "node:fs";
import { type FileHandle, lstat, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ShepherdError } from "../domain/errors.ts";
import type { Baseline, Diffstat, FileChange, FileStatus } from "../ports/workspace.ts";
import { MAX_EVIDENCE_FILES } from "../ports/workspace.ts";
import { type Git, nulFields, objectId } from "./run.ts";

/** Plumbing with every program a config could plug in turned off: no external diff, no textconv. */
const DIFF = ["diff-tree", "-r", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv"];
/** Inline text is bounded by characters too: one minified line can be megabytes. */
const MAX_INLINE_CHARS = 64 * 1024;

const STATUS: Record<string, FileStatus> = { A: "added", M: "modified", D: "deleted", T: "typechange" };

export async function diffTrees(git: Git, root: string, from: string, to: string): Promise<FileChange[]> {
  // --raw gives each side's mode: a symbolic link (120000) is said to be one, with its target.
  const raw = nulFields(await git.value(root, [...DIFF, "-z", "--raw", "--no-abbrev", from, to, "--"]));
  const counts = new Map<string, { insertions: number; deletions: number; binary: boolean }>();
  for (const record of nulFields(await git.value(root, [...DIFF, "-z", "--numstat", from, to, "--"]))) {
    const [ins, del, ...rest] = record.split("\t");
    const binary = ins === "-" && del === "-";
    counts.set(rest.join("\t"), { insertions: binary ? 0 : Number(ins), deletions: binary ? 0 : Number(del), binary });
  }
  const files: FileChange[] = [];
  const links = new Map<number, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const [, dstMode, , dstId, status] = raw[i]!.split(" ");
    const path = raw[i + 1]!;
    const c = counts.get(path) ?? { insertions: 0, deletions: 0, binary: false };
    const code = (status ?? "").charAt(0);
    if (dstMode === SYMLINK_MODE && code !== "D" && dstId) links.set(files.length, dstId);
    files.push({
      path,
      status: STATUS[code] ?? "modified",
      insertions: c.insertions,
      deletions: c.deletions,
      ...(c.binary ? { binary: true as const } : {}),
    });
  }
  if (links.size > 0) {
    const targets = await linkTargets(git, root, [...new Set(links.values())]);
    for (const [i, id] of links) files[i]!.link = targets.get(id) ?? "(a link target too long to show)";
  }
  return files;
}

const SYMLINK_MODE = "120000";
/** A link target longer than this is not read (a blob at mode 120000 can be any size). */
const MAX_LINK_BYTES = 4096;

/** The targets of symbolic links, by blob id: their sizes in one `cat-file --batch-check`, then each short one. */
async function linkTargets(git: Git, root: string, ids: readonly string[]): Promise<Map<string, string>> {
  const sizes = await git.value(root, ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"], { input: `${ids.join("\n")}\n` });
  const out = new Map<string, string>();
  for (const [id, type, size] of sizes.split("\n").map((l) => l.split(" "))) {
    if (!id || type !== "blob" || !(Number(size) <= MAX_LINK_BYTES)) continue;
    out.set(id, (await git.run(root, ["cat-file", "blob", objectId(id, "a link's blob")])).stdout);
  }
  return out;
}

/**
 * Writes the whole patch between two trees to patchPath (0600); returns its first lines. patchPath
 * is in the sheep's own directory, where a sheep may have put a FIFO or a link to a file of yours:
 * that name is never opened. The patch goes into a new private file (exclusive, no link followed),
 * is written and read back through its own descriptor, and only then renamed over the name. The
 * directory is opened once (no link followed), checked to be a directory of ours, and held: both
 * names are reached through it, so a link put in its place meanwhile leads nowhere.
 */
async function writePatch(git: Git, root: string, from: string, to: string, patchPath: string, inlineLines: number) {
  const held = await holdDirectory(dirname(patchPath));
  try {
    const name = basename(patchPath);
    const tmpName = `.${randomBytes(6).toString("hex")}.patch.tmp`;
    const tmp = held.path(tmpName);
    const file = await open(tmp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await git.run(root, [...DIFF, "-p", "--binary", from, to, "--"], { stdoutFd: file.fd });
      await held.check();
      await rename(tmp, held.path(name));
      return await headLines(file, inlineLines, MAX_INLINE_CHARS);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    } finally {
      await file.close();
    }
  } finally {
    await held.close();
  }
}

/**
 * A directory opened without following a link and checked to be a real one owned by this user.
 * path() names a file in it through /proc/self/fd (Linux), which reaches the opened directory
 * whatever has been put at its name since; where there is no /proc, check() looks again that the
 * name still leads to the directory that was opened, right before the rename.
 */
export async function holdDirectory(dir: string): Promise<{ path: (name: string) => string; check: () => Promise<void>; close: () => Promise<void> }> {
  const refuse = (why: string) => new ShepherdError("git_error", `the evidence directory ${dir} ${why}; no patch was written.`);
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch((e: NodeJS.ErrnoException) => {
    throw refuse(e.code === "ELOOP" || e.code === "ENOTDIR" ? "is not a real directory (a link or a file)" : `could not be opened (${e.code ?? e.message})`);
  });
  try {
    const st = await handle.stat();
    if (!st.isDirectory()) throw refuse("is not a directory");
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) throw refuse("is not the shepherd user's own");
    const viaProc = `/proc/self/fd/${handle.fd}`;
    const proc = await lstat(viaProc).then(
      () => true,
      () => false,
    );
    return {
      path: (name) => join(proc ? viaProc : dir, name),
      check: async () => {
        if (proc) return;
        const now = await lstat(dir).catch(() => undefined);
        if (!now?.isDirectory() || now.ino !== st.ino || now.dev !== st.dev) throw refuse("was replaced while the patch was written");
      },
      close: () => handle.close(),
    };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/** The first n lines of an open file (at most maxChars), read from its start without loading the rest. */
export async function headLines(file: FileHandle, n: number, maxChars: number): Promise<{ text: string; more: boolean }> {
  let text = "";
  let lines = 0;
  const stream: ReadStream = file.createReadStream({ encoding: "utf8", highWaterMark: 64 * 1024, start: 0, autoClose: false });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      for (let i = 0; i < chunk.length; i++) {
        if (lines >= n || text.length >= maxChars) return { text, more: true };
        const ch = chunk[i]!;
        text += ch;
        if (ch === "\n") lines++;
      }
    }
  } finally {
    stream.destroy();
  }
  return { text, more: false };
}

export async function evidenceDiff(
  git: Git,
  baseline: Baseline,
  end: { tree: string; at: string; commit?: string },
  o: { patchPath: string; inlineLines: number },
): Promise<Diffstat> {
  const { root, tree } = baseline;
  const after = end.tree;
  const all = await diffTrees(git, root, tree, after);
  const inline = await writePatch(git, root, tree, after, o.patchPath, o.inlineLines);
  return {
    baseline,
    after,
    ...(end.commit ? { afterCommit: end.commit } : {}),
    afterAt: end.at,
    files: all.slice(0, MAX_EVIDENCE_FILES),
    fileCount: all.length,
    insertions: all.reduce((s, f) => s + f.insertions, 0),
    deletions: all.reduce((s, f) => s + f.deletions, 0),
    patchPath: o.patchPath,
    patch: inline.text,
    truncated: inline.more || all.length > MAX_EVIDENCE_FILES,
  };
}
