/**
 * `<agentDir>/pi-shepherd/audit.ndjson`: one JSON line per event, appended, private (0600), and
 * rotated at 5 MB into `audit.ndjson.1` (one old file is kept). Writes are synchronous so events
 * land in the order they happened, and a failing write never fails the call that reported it.
 */
import { chmodSync, closeSync, constants, fstatSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { AUDIT_EVENTS, type AuditEvent, type AuditSink } from "../ports/audit.ts";

export const AUDIT_FILE = "audit.ndjson";
export const AUDIT_MAX_BYTES = 5 * 1024 * 1024;

export interface AuditLogOptions {
  /** The state directory (`<agentDir>/pi-shepherd`). */
  dir: string;
  maxBytes?: number;
  /** Told once when writing starts to fail, and again only after a write succeeded. */
  onWarning?: (message: string) => void;
}

export function auditFiles(dir: string): { current: string; old: string } {
  const current = join(dir, AUDIT_FILE);
  return { current, old: `${current}.1` };
}

// O_NOFOLLOW: a link planted at the log's name must not make us append to another file.
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export class AuditLog implements AuditSink {
  private readonly files: { current: string; old: string };
  private readonly maxBytes: number;
  private failing = false;

  constructor(private readonly o: AuditLogOptions) {
    this.files = auditFiles(o.dir);
    this.maxBytes = o.maxBytes ?? AUDIT_MAX_BYTES;
  }

  record(event: AuditEvent): void {
    const line = `${JSON.stringify(event)}\n`;
    try {
      this.append(line);
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.o.onWarning?.(`pi-shepherd: could not write the audit log ${this.files.current}: ${(e as Error).message}`);
      this.failing = true;
    }
  }

  private append(line: string): void {
    let fd = this.open();
    try {
      const st = fstatSync(fd);
      if (st.size > 0 && st.size + Buffer.byteLength(line) > this.maxBytes) {
        closeSync(fd);
        fd = -1;
        // Another shepherd may have rotated a moment ago; the rename then moves a small file,
        // which loses nothing but that file's few lines from the old name.
        renameSync(this.files.current, this.files.old);
        fd = this.open();
      }
      writeSync(fd, line);
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  }

  private open(): number {
    let fd: number;
    try {
      fd = openSync(this.files.current, APPEND, 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      mkdirSync(this.o.dir, { recursive: true, mode: 0o700 });
      chmodSync(this.o.dir, 0o700);
      fd = openSync(this.files.current, APPEND, 0o600);
    }
    // A log someone made readable is made private again before a line is added to it.
    if ((fstatSync(fd).mode & 0o077) !== 0) chmodSync(this.files.current, 0o600);
    return fd;
  }
}

const STRING_FIELDS = [
  "agentId",
  "promptId",
  "label",
  "agent",
  "action",
  "runtime",
  "paneId",
  "cwd",
  "model",
  "resumedFrom",
  "status",
  "reason",
  "error",
  "from",
  "steerId",
  "messageId",
  "branch",
  "into",
  "commit",
  "target",
] as const;

/** A line read back is data someone may have written by hand: only well-shaped events are used. */
function eventOf(line: string): AuditEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const e = v as Record<string, unknown>;
  if (!(AUDIT_EVENTS as readonly unknown[]).includes(e.event) || typeof e.time !== "string" || typeof e.owner !== "string") return undefined;
  for (const k of STRING_FIELDS) if (e[k] !== undefined && typeof e[k] !== "string") return undefined;
  for (const k of ["bytes", "durationMs", "fileCount"]) if (e[k] !== undefined && typeof e[k] !== "number") return undefined;
  for (const k of ["squash", "landed", "sandboxed"]) if (e[k] !== undefined && typeof e[k] !== "boolean") return undefined;
  return e as unknown as AuditEvent;
}

/**
 * The last `limit` events, oldest first, from the old file and the current one; with `agent`,
 * only the events of the sheep with that id or label.
 */
export async function readAudit(dir: string, o: { limit: number; agent?: string }): Promise<AuditEvent[]> {
  const { current, old } = auditFiles(dir);
  const events: AuditEvent[] = [];
  for (const path of [old, current]) {
    const text = await readFile(path, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      const e = line ? eventOf(line) : undefined;
      if (e && (o.agent === undefined || e.agentId === o.agent || e.label === o.agent)) events.push(e);
    }
  }
  return events.slice(-o.limit);
}
