/**
 * One sheep's egress log: every attempt its proxy saw, as JSON lines in a private file of the sheep's
 * own directory, plus counters and the latest entries in memory. The file is bounded: past `maxBytes`
 * it becomes `<file>.1` (the one before that is dropped) and a new file begins, so a sheep that tries
 * a million hosts costs at most twice the cap on disk.
 */
import { constants } from "node:fs";
import { lstat, open, rename, unlink } from "node:fs/promises";
import type { EgressAttempt } from "../../ports/types.ts";

/**
 * The file lies in the sheep's own directory, which a sandboxed sheep can write: it may have put a
 * symbolic or hard link to another of the user's files there. Opened without following a link, and
 * a file that is no regular file or has another name too is removed (the name, not what it names)
 * and made anew: the proxy's lines never land in a file the sheep chose. Returns the file's new size.
 */
async function appendPrivate(file: string, line: string): Promise<number> {
  // O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of holding every later entry.
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  let h = await open(file, flags, 0o600).catch(async (e: NodeJS.ErrnoException) => {
    // A symbolic link there (O_NOFOLLOW: ELOOP) or a FIFO: remove the name, make the file.
    if (e.code !== "ELOOP" && e.code !== "ENXIO") throw e;
    await unlink(file);
    return open(file, flags | constants.O_EXCL, 0o600);
  });
  let st = await h.stat();
  if (!st.isFile() || st.nlink !== 1) {
    await h.close();
    await unlink(file);
    h = await open(file, flags | constants.O_EXCL, 0o600);
    st = await h.stat();
  }
  try {
    await h.appendFile(line);
    return st.size + Buffer.byteLength(line);
  } finally {
    await h.close();
  }
}

/** What the proxy writes is what the readers check it against: one shape (ports/types.ts). */
export type EgressEntry = EgressAttempt;

export interface EgressCounts {
  allowed: number;
  refused: number;
}

export interface EgressLogOptions {
  /** Cap of the file before it rotates (default 1 MiB). */
  maxBytes?: number;
  /** Entries kept in memory for `last` (default 256). */
  keep?: number;
}

const MAX_LINE = 2048;

export class EgressLog {
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly recent: EgressEntry[] = [];
  private readonly tally: EgressCounts = { allowed: 0, refused: 0 };
  private size: number | undefined;
  /** Appends run one after another, so a line is never split by another and rotation sees a true size. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    o: EgressLogOptions = {},
  ) {
    this.maxBytes = o.maxBytes ?? 1024 * 1024;
    this.keep = o.keep ?? 256;
  }

  add(entry: EgressEntry): void {
    this.tally[entry.verdict]++;
    this.recent.push(entry);
    if (this.recent.length > this.keep) this.recent.splice(0, this.recent.length - this.keep);
    let line = `${JSON.stringify(entry)}\n`;
    if (line.length > MAX_LINE) line = `${JSON.stringify({ ...entry, target: entry.target.slice(0, 300) })}\n`;
    this.chain = this.chain.then(() => this.write(line)).catch(() => {});
  }

  private async write(line: string): Promise<void> {
    this.size ??= await lstat(this.file).then(
      (s) => (s.isFile() ? s.size : 0),
      () => 0,
    );
    const bytes = Buffer.byteLength(line);
    if (this.size > 0 && this.size + bytes > this.maxBytes) {
      await rename(this.file, `${this.file}.1`).catch(() => {});
    }
    this.size = await appendPrivate(this.file, line);
  }

  /** Resolves once every entry added so far is on disk. */
  flushed(): Promise<void> {
    return this.chain;
  }

  counts(): EgressCounts {
    return { ...this.tally };
  }

  /** The last n entries, oldest first (from memory; src/protocol/egress-log.ts reads a file back). */
  last(n: number): EgressEntry[] {
    return n <= 0 ? [] : this.recent.slice(-n);
  }
}
