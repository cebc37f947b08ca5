/**
 * The one way the shepherd reads a file a sheep can write (everything in a sheep's directory, and
 * the session file a card names): only a regular file is opened, never through a symlink, never
 * waiting on a FIFO or a device, and never more than a stated number of bytes. A sheep can put
 * anything at those names; a FIFO read blocking would stall the whole shepherd (the widget reads
 * status.json every second), and a huge file read whole would take its memory and its event loop.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from "node:fs";
import { lstat, open, type FileHandle } from "node:fs/promises";
import { MAX_RESULT_BYTES } from "../domain/sheep-data.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The most read of each kind of file. status.json carries a question (16 KiB of text, up to six
 * bytes a character once JSON-escaped) twice over, as `asking` and in `blocked`; a result is a
 * model's answer, far below this; the message log's bound is the one the sheep's tool stops at;
 * the session tail is read from the end.
 */
export const READ_LIMITS = {
  status: 256 * KiB,
  exit: 64 * KiB,
  result: MAX_RESULT_BYTES,
  reply: 64 * KiB,
  resume: 1 * MiB,
  messages: 4 * MiB,
  session: 8 * MiB,
  /** What readJson reads of the shepherd's own files in a sheep's directory (a prompt of 4 MiB, JSON-escaped). */
  inbox: 32 * MiB,
} as const;

export type ReadKind = keyof typeof READ_LIMITS;

/** Why a file gave no contents: not there, something other than a regular file, past its bound, or an I/O error. */
export type ReadRefusal = "missing" | "not_regular" | "too_large" | "unreadable";

export type BoundedRead =
  | { ok: true; data: Buffer; size: number; ino: number; mtimeMs: number; truncated: boolean }
  | { ok: false; why: ReadRefusal; size?: number; max: number };

export interface BoundedOptions {
  /** Bytes to read at most. */
  max: number;
  /** A file past the bound: refuse it (`too_large`, the default), or return its first `max` bytes (`truncated`). */
  over?: "refuse" | "head";
}

/** O_NOFOLLOW: a symlink put in place after the lstat still fails (ELOOP); O_NONBLOCK: a FIFO opens without waiting for a writer. */
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** A file is read in chunks of this much past its size, so one that grows meanwhile is still bounded. */
const CHUNK = 64 * KiB;

function refusalOf(e: unknown): ReadRefusal {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return "missing";
  if (code === "ELOOP" || code === "EISDIR" || code === "ENXIO") return "not_regular";
  return "unreadable";
}

/** The lstat and fstat agree: a regular file, and the same one (an atomic rename in between is told apart as a retry). */
function sameRegular(seen: Stats, opened: Stats): "ok" | "not_regular" | "replaced" {
  if (!opened.isFile()) return "not_regular";
  return opened.ino === seen.ino && opened.dev === seen.dev ? "ok" : "replaced";
}

/** How often a file being replaced by rename between lstat and open is looked at again. */
const ATTEMPTS = 3;

/** A regular file opened for reading (the caller closes it), or why not. */
export async function openRegular(path: string): Promise<{ ok: true; file: FileHandle; stat: Stats } | { ok: false; why: ReadRefusal }> {
  for (let attempt = 1; ; attempt++) {
    let seen: Stats;
    try {
      seen = await lstat(path);
    } catch (e) {
      return { ok: false, why: refusalOf(e) };
    }
    if (!seen.isFile()) return { ok: false, why: "not_regular" };
    let file: FileHandle;
    try {
      file = await open(path, FLAGS);
    } catch (e) {
      return { ok: false, why: refusalOf(e) };
    }
    let stat: Stats;
    try {
      stat = await file.stat();
    } catch (e) {
      await file.close().catch(() => undefined);
      return { ok: false, why: refusalOf(e) };
    }
    const same = sameRegular(seen, stat);
    if (same === "ok") return { ok: true, file, stat };
    await file.close().catch(() => undefined);
    if (same === "not_regular") return { ok: false, why: "not_regular" };
    if (attempt >= ATTEMPTS) return { ok: false, why: "unreadable" };
  }
}

/** openRegular's synchronous twin: the file descriptor (the caller closes it), or why not. */
export function openRegularSync(path: string): { ok: true; fd: number; stat: Stats } | { ok: false; why: ReadRefusal } {
  for (let attempt = 1; ; attempt++) {
    let seen: Stats;
    try {
      seen = lstatSync(path);
    } catch (e) {
      return { ok: false, why: refusalOf(e) };
    }
    if (!seen.isFile()) return { ok: false, why: "not_regular" };
    let fd: number;
    try {
      fd = openSync(path, FLAGS);
    } catch (e) {
      return { ok: false, why: refusalOf(e) };
    }
    let stat: Stats;
    try {
      stat = fstatSync(fd);
    } catch (e) {
      closeSync(fd);
      return { ok: false, why: refusalOf(e) };
    }
    const same = sameRegular(seen, stat);
    if (same === "ok") return { ok: true, fd, stat };
    closeSync(fd);
    if (same === "not_regular") return { ok: false, why: "not_regular" };
    if (attempt >= ATTEMPTS) return { ok: false, why: "unreadable" };
  }
}

/**
 * The sizes of the reads that take at most max + 1 bytes (one more than allowed tells a file past
 * the bound): the first covers the file as it was stat'ed, more only if it grew meanwhile.
 */
function nextRead(size: number, max: number, total: number): number {
  return Math.min(max + 1 - total, total === 0 ? size + 1 : CHUNK);
}

function outcome(data: Buffer, stat: Stats, o: BoundedOptions): BoundedRead {
  const over = data.length > o.max;
  if (over && (o.over ?? "refuse") === "refuse") return { ok: false, why: "too_large", size: Math.max(stat.size, data.length), max: o.max };
  return {
    ok: true,
    data: over ? data.subarray(0, o.max) : data,
    size: stat.size,
    ino: stat.ino,
    mtimeMs: stat.mtimeMs,
    truncated: over,
  };
}

/** A sheep-writable file's contents, at most `max` bytes; never blocks on a FIFO, never follows a symlink. */
export async function readBounded(path: string, o: BoundedOptions): Promise<BoundedRead> {
  const opened = await openRegular(path);
  if (!opened.ok) return { ok: false, why: opened.why, max: o.max };
  const { file, stat } = opened;
  try {
    // Refused before reading a byte when it is already known to be too large.
    if ((o.over ?? "refuse") === "refuse" && stat.size > o.max) return { ok: false, why: "too_large", size: stat.size, max: o.max };
    const parts: Buffer[] = [];
    let total = 0;
    for (let want = nextRead(stat.size, o.max, 0); want > 0; want = nextRead(stat.size, o.max, total)) {
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await file.read(buf, 0, want, total);
      if (bytesRead <= 0) break;
      parts.push(buf.subarray(0, bytesRead));
      total += bytesRead;
    }
    return outcome(Buffer.concat(parts, total), stat, o);
  } catch (e) {
    return { ok: false, why: refusalOf(e), max: o.max };
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** readBounded's synchronous twin, for small files read on every wake-up (status.json, exit.json). */
export function readBoundedSync(path: string, o: BoundedOptions): BoundedRead {
  const opened = openRegularSync(path);
  if (!opened.ok) return { ok: false, why: opened.why, max: o.max };
  const { fd, stat } = opened;
  try {
    if ((o.over ?? "refuse") === "refuse" && stat.size > o.max) return { ok: false, why: "too_large", size: stat.size, max: o.max };
    const parts: Buffer[] = [];
    let total = 0;
    for (let want = nextRead(stat.size, o.max, 0); want > 0; want = nextRead(stat.size, o.max, total)) {
      const buf = Buffer.allocUnsafe(want);
      const got = readSync(fd, buf, 0, want, total);
      if (got <= 0) break;
      parts.push(buf.subarray(0, got));
      total += got;
    }
    return outcome(Buffer.concat(parts, total), stat, o);
  } catch (e) {
    return { ok: false, why: refusalOf(e), max: o.max };
  } finally {
    closeSync(fd);
  }
}

/** JSON of a sheep-writable file: the value, or why there is none (`invalid` for text that is not JSON). */
export type JsonRead<T> = { ok: true; value: T } | { ok: false; why: ReadRefusal | "invalid"; size?: number; max: number };

function jsonOf<T>(r: BoundedRead): JsonRead<T> {
  if (!r.ok) return r;
  try {
    return { ok: true, value: JSON.parse(r.data.toString("utf8")) as T };
  } catch {
    return { ok: false, why: "invalid", max: r.data.length };
  }
}

export async function readJsonBounded<T>(path: string, kind: ReadKind): Promise<JsonRead<T>> {
  return jsonOf<T>(await readBounded(path, { max: READ_LIMITS[kind] }));
}

export function readJsonBoundedSync<T>(path: string, kind: ReadKind): JsonRead<T> {
  return jsonOf<T>(readBoundedSync(path, { max: READ_LIMITS[kind] }));
}

/** The value, or undefined for any file that gave none (missing, refused, too large, not JSON). */
export const jsonValue = <T>(r: JsonRead<T>): T | undefined => (r.ok ? r.value : undefined);

/** Words for a refusal, naming the bound where it matters. */
export function refusalText(name: string, r: { why: ReadRefusal | "invalid"; size?: number; max: number }): string {
  switch (r.why) {
    case "missing":
      return `${name} is missing`;
    case "not_regular":
      return `${name} is not a regular file (a symlink, FIFO, device or directory), so it was not opened`;
    case "too_large":
      return `${name} is ${r.size !== undefined ? `${r.size} bytes, ` : ""}larger than the ${r.max} bytes read of it`;
    case "invalid":
      return `${name} is not valid JSON`;
    case "unreadable":
      return `${name} could not be read`;
  }
}
