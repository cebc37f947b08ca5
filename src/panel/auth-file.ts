/**
 * The panel's auth kept across pi restarts, in one private file of its own:
 * `<agentDir>/pi-shepherd/panel/auth.json` (0600, its directory 0700). It holds the token (a URL
 * printed before a restart opens the page after it) and each page session as the digests of its
 * cookie and key with its last use, never the cookie or key, so a session still ends after its idle
 * time and the file alone signs no request in. Only the panel on the port the file names keeps it:
 * the cookie's name carries the port, so another port's sessions would match nothing anyway.
 */
import { unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomicSync } from "../protocol/files.ts";
import { readBoundedSync } from "../protocol/bounded-read.ts";
import { type AuthSnapshot, MAX_SESSIONS, PanelAuth } from "./auth.ts";
import { ensurePanelDir, panelDir, privateFileProblem } from "./private-files.ts";

/** A use of the token or a session is written at most this often (a new token or session at once). */
export const AUTH_SAVE_EVERY_MS = 60_000;
/** The file is a token and at most MAX_SESSIONS digests: a few KiB. Anything larger is not the panel's. */
const MAX_BYTES = 64 * 1024;

export interface AuthFileContents extends AuthSnapshot {
  v: 1;
  port: number;
}

export function authFilePath(agentDir: string): string {
  return join(panelDir(agentDir), "auth.json");
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The file's contents when they are exactly what this module writes; undefined otherwise. */
export function parseAuthFile(v: unknown): AuthFileContents | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.v !== 1 || !Number.isInteger(o.port) || (o.port as number) <= 0 || (o.port as number) > 65535) return undefined;
  if (typeof o.token !== "string" || !/^[A-Za-z0-9_-]{32,200}$/.test(o.token)) return undefined;
  if (typeof o.tokenUsed !== "number" || !Number.isFinite(o.tokenUsed)) return undefined;
  if (!Array.isArray(o.sessions) || o.sessions.length > MAX_SESSIONS) return undefined;
  const sessions: AuthSnapshot["sessions"] = [];
  for (const s of o.sessions as unknown[]) {
    const x = s as Record<string, unknown> | null;
    if (typeof x !== "object" || x === null) return undefined;
    if (typeof x.cookie !== "string" || !HEX64.test(x.cookie) || typeof x.key !== "string" || !HEX64.test(x.key)) return undefined;
    if (typeof x.used !== "number" || !Number.isFinite(x.used)) return undefined;
    sessions.push({ cookie: x.cookie, key: x.key, used: x.used });
  }
  return { v: 1, port: o.port as number, token: o.token, tokenUsed: o.tokenUsed, sessions };
}

/** The auth one panel keeps in its file, and writes back as it changes. */
export class AuthFile {
  private timer: NodeJS.Timeout | undefined;
  private lastSave = 0;
  private kept: { auth: PanelAuth; port: number } | undefined;

  constructor(
    readonly path: string,
    private readonly now: () => number = Date.now,
  ) {}

  static of(agentDir: string): AuthFile {
    return new AuthFile(authFilePath(agentDir));
  }

  /**
   * The auth the file holds for this port, or a fresh one (and why, when a file was there but
   * refused: not private, not the panel's shape, or another port's).
   */
  load(port: number): { auth: PanelAuth; restored: boolean; problem?: string } {
    const fresh = (problem?: string) => ({ auth: new PanelAuth(undefined, this.now), restored: false, ...(problem ? { problem } : {}) });
    const dirProblem = privateFileProblem(join(this.path, ".."), "dir");
    if (dirProblem === "missing") return fresh();
    if (dirProblem) return fresh(dirProblem);
    const problem = privateFileProblem(this.path);
    if (problem === "missing") return fresh();
    if (problem) return fresh(problem);
    const read = readBoundedSync(this.path, { max: MAX_BYTES });
    if (!read.ok) return fresh(`${this.path} could not be read (${read.why})`);
    let contents: AuthFileContents | undefined;
    try {
      contents = parseAuthFile(JSON.parse(read.data.toString("utf8")));
    } catch {
      contents = undefined;
    }
    if (!contents) return fresh(`${this.path} is not the panel's auth file`);
    // Another port's sessions are of another cookie name; its token would open a page this port's origin cannot follow.
    if (contents.port !== port) return fresh();
    return { auth: PanelAuth.restore(contents, this.now), restored: true };
  }

  /** From now on the file follows this auth: written now, then at each change (a use at most every AUTH_SAVE_EVERY_MS). */
  keep(auth: PanelAuth, port: number): void {
    this.kept = { auth, port };
    auth.onChange = (urgent) => {
      if (urgent || this.now() - this.lastSave >= AUTH_SAVE_EVERY_MS) return this.save();
      this.timer ??= setTimeout(() => this.save(), AUTH_SAVE_EVERY_MS).unref();
    };
    this.save();
  }

  /** Writes what it keeps now (its last uses included) and stops following it. */
  release(): void {
    if (this.kept) this.save();
    if (this.kept) this.kept.auth.onChange = undefined;
    this.kept = undefined;
  }

  /** The file removed (the panel turned off, or its port found taken): neither its token nor a session opens anything after a restart. */
  forget(): void {
    this.release();
    try {
      unlinkSync(this.path);
    } catch {
      // not there
    }
  }

  /** Written whole, 0600, by rename: a reader never sees half of it. A write that fails is retried at the next change. */
  save(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const kept = this.kept;
    if (!kept) return;
    try {
      ensurePanelDir(join(this.path, ".."));
      const contents: AuthFileContents = { v: 1, port: kept.port, ...kept.auth.snapshot() };
      writeJsonAtomicSync(this.path, contents);
      this.lastSave = this.now();
    } catch {
      // a full disk: the panel works on from memory; the next change tries again
    }
  }
}
