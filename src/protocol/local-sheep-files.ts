import { spendFrom } from "../domain/budget.ts";
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { lstat, readdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { errorText, ShepherdError } from "../domain/errors.ts";
import { isWellFormedId } from "../domain/ids.ts";
import { MAX_PATH_CHARS, stringOf, timeOf } from "../domain/sheep-data.ts";
import { sheepResultOf } from "../ports/sheep-result.ts";
import type { SheepMessage } from "../ports/types.ts";
import { buildLaunchSpec } from "./launch-spec.ts";
import type { Conversation, EgressReport, ResumeCard } from "../ports/types.ts";
import {
  resumeCardOf,
  type Delivery,
  type PreparedSheep,
  type PrepareRequest,
  type ReplyOutcome,
  type SheepFiles,
  type SheepResult,
  type SheepSnapshot,
} from "../ports/sheep-files.ts";
import { READ_LIMITS, readBounded, readJsonBounded, readJsonBoundedSync, refusalText, jsonValue, type JsonRead } from "./bounded-read.ts";
import { ensurePrivateDir, writeJsonAtomic, writeJsonExclusive } from "./files.ts";
import { cardsDir, egressLogDir, INBOX_FILE, sheepDir, sheepLayout, stateDir, worktreesDir } from "./layout.ts";
import { MAX_MESSAGE_CHARS, parseMessageLog } from "./message-log.ts";
import type { ExitReport, InboxItem, ReplyFile, ResultFile, StatusReport } from "./messages.ts";
import { pidRunning } from "./pid.ts";
import { readResumeCard, readResumeCards, SESSION_FILE } from "./resume-card.ts";
import { readSessionTail } from "./session-log.ts";
import { readEgressReport } from "./egress-log.ts";
import { specsOlderThan } from "./stale-specs.ts";
import { checkSandboxCwd, sandboxedPaneArgv, sandboxSpecEnv, type SandboxConfig } from "../sandbox/launch.ts";

export interface FileHostOptions {
  agentDir: string;
  piCommand: readonly string[];
  nodePath: string;
  launcherPath: string;
  /** src/launch/report-exit.sh, run by /bin/sh around the launcher where the multiplexer cannot report pi's exit. */
  reportExitPath: string;
  sheepExtension: string;
  env: NodeJS.ProcessEnv;
  depth: number;
  extraPiArgs?: readonly string[];
  /** Names carried to every sheep besides the provider settings the spec carries by rule (a host's `forwardEnv`). */
  carryEnv?: readonly string[];
  /** Fallback poll for file systems where fs.watch misses events. */
  pollMs?: number;
  /** How this machine sandboxes a sheep (the user's `sandbox` setting); absent: a sandboxed start is refused. */
  sandbox?: SandboxConfig;
  /** How long a sheep's pid must be dead, with no exit.json, before it counts as exited. */
  deadPidGraceMs?: number;
  /** Told what went wrong where no call is waiting (a sandboxed sheep's egress not served again after a reload). */
  onWarning?: (message: string) => void;
}

const reportName = (name: string) => name === "status.json" || name === "exit.json" || name === "messages.jsonl";
const resultName = (name: string) => !name.startsWith(".");

/** The sheep protocol on disk: prompts and results travel as files, never as keystrokes. */
export class LocalSheepFiles implements SheepFiles {
  /** Per sheep: since when its reported pid has been seen dead. */
  private readonly deadSince = new Map<string, number>();
  /** Per sheep: the pid its last status report named, for `running`. */
  private readonly pids = new Map<string, number>();
  /**
   * Per sheep: its parsed message log and the file it was read from (inode, size, mtime), so an
   * unchanged log is not parsed again, and a log that cannot be read now answers with what was
   * read before: the counts of read and pushed messages never go back.
   */
  private readonly logs = new Map<string, { key: string; messages: SheepMessage[] }>();
  /** The last inbox sequence handed out, so deliveries in one millisecond keep their order. */
  private lastSeq = 0;

  constructor(private readonly o: FileHostOptions) {}

  private layout(agentId: string) {
    return sheepLayout(sheepDir(this.o.agentDir, agentId));
  }

  async prepare(req: PrepareRequest): Promise<PreparedSheep> {
    const layout = this.layout(req.agentId);
    const systemPrompt = req.definition.systemPrompt?.trim();
    // A resumed sheep runs on the session of the card it continues, found by its id: never a path handed in.
    const sessionPath = req.resume ? this.resumedSession(req.resume) : layout.session;
    // Built before anything is written: a refused model or tool name leaves no directory behind.
    const spec = buildLaunchSpec({
      layout,
      agentId: req.agentId,
      definition: req.definition,
      cwd: req.cwd,
      ...(req.model !== undefined ? { model: req.model } : {}),
      piCommand: this.o.piCommand,
      sheepExtension: this.o.sheepExtension,
      agentDir: this.o.agentDir,
      env: this.o.env,
      depth: this.o.depth,
      ...(this.o.extraPiArgs ? { extraArgs: this.o.extraPiArgs } : {}),
      ...(this.o.carryEnv ? { carry: this.o.carryEnv } : {}),
      hasSystemPrompt: Boolean(systemPrompt),
      ...(req.resume ? { sessionPath } : {}),
    });
    // The user's "on" holds for every sheep of this host, the warm pool's too; a request may only add it.
    const sandbox = req.sandbox === true || this.o.sandbox?.settings.default === "on" ? this.o.sandbox : undefined;
    if ((req.sandbox === true || this.o.sandbox?.settings.default === "on") && !sandbox) {
      throw new ShepherdError("sandbox_unavailable", "this machine has no sandbox configured; the sheep does not run unsandboxed instead.");
    }
    // Checked before anything is written: a machine without bubblewrap leaves nothing behind.
    const bwrap = sandbox ? await sandbox.bwrap() : undefined;
    if (sandbox) checkSandboxCwd(req.cwd);
    if (sandbox) {
      spec.env = sandboxSpecEnv(spec.env, {
        ...((req.model ?? req.definition.model) ? { model: req.model ?? req.definition.model } : {}),
        agentDir: this.o.agentDir,
        ...(this.o.carryEnv ? { forward: this.o.carryEnv } : {}),
      });
    }
    const made = resumeCardOf(req, sessionPath);
    // A sandboxed sheep's conversation goes on in a sandbox: its card's definition asks for one.
    const card = sandbox ? { ...made, definition: { ...made.definition, sandbox: true } } : made;
    await ensurePrivateDir(layout.dir);
    await ensurePrivateDir(layout.inbox);
    await ensurePrivateDir(layout.outbox);
    await ensurePrivateDir(layout.replies);
    if (systemPrompt) await writeFile(layout.systemPrompt, systemPrompt + "\n", { mode: 0o600 });
    await writeJsonAtomic(layout.spec, spec);
    await ensurePrivateDir(cardsDir(this.o.agentDir));
    await writeJsonAtomic(layout.resume, card);
    const launcher = [this.o.nodePath, this.o.launcherPath, layout.spec];
    const model = req.model ?? req.definition.model;
    const egressDir = sandbox && bwrap ? await this.openEgress(req.agentId, model) : undefined;
    // Made once (the first sandboxed start waits for it; that sheep would transpile as long itself); none costs speed only.
    const jitiSeed = sandbox && bwrap ? await sandbox.jitiSeed?.().catch(() => undefined) : undefined;
    const argv =
      sandbox && bwrap
        ? sandboxedPaneArgv({
            bwrap,
            config: sandbox,
            env: this.o.env,
            agentDir: this.o.agentDir,
            stateDir: stateDir(this.o.agentDir),
            sheepDir: layout.dir,
            sessionFile: sessionPath,
            worktreesDir: worktreesDir(this.o.agentDir),
            cwd: req.cwd,
            ...(egressDir !== undefined ? { egressDir } : {}),
            ...(jitiSeed !== undefined ? { jitiSeed } : {}),
            argv: launcher,
            runs: [...this.o.piCommand, this.o.sheepExtension],
          })
        : launcher;
    return {
      sessionPath,
      command: { argv, reporting: ["/bin/sh", this.o.reportExitPath, layout.exit, ...argv] },
      ...(sandbox ? { sandboxed: true as const } : {}),
    };
  }

  async staleSpecs(olderThanMs: number): Promise<{ agentId: string }[]> {
    return (await specsOlderThan(stateDir(this.o.agentDir), olderThanMs)).map((agentId) => ({ agentId }));
  }

  private resumedSession(resume: { from: string; sessionPath: string }): string {
    const from = readResumeCard(this.o.agentDir, resume.from);
    if (!from || from.sessionPath !== resume.sessionPath) {
      throw new ShepherdError("not_resumable", `sheep ${resume.from} has no kept conversation of its own at ${resume.sessionPath}; start it anew instead.`);
    }
    return from.sessionPath;
  }

  async snapshot(agentId: string): Promise<SheepSnapshot> {
    const layout = this.layout(agentId);
    // Read on every wake-up of every waiter and by the widget each second: small, and read synchronously.
    const status = jsonValue(readJsonBoundedSync<StatusReport>(layout.status, "status"));
    const exit = exitReport(jsonValue(readJsonBoundedSync<unknown>(layout.exit, "exit")));
    const snap: SheepSnapshot = {};
    if (status && typeof status === "object") {
      // The sheep's own report: each field checked and bounded, a time that is none is the time it was read.
      const sessionPath = typeof status.sessionPath === "string" && status.sessionPath.length <= MAX_PATH_CHARS ? status.sessionPath : undefined;
      snap.ready = { pid: status.pid, readyAt: timeOf(status.readyAt) ?? new Date().toISOString(), ...(sessionPath ? { sessionPath } : {}) };
      const blocked = stringOf(status.blocked, MAX_MESSAGE_CHARS);
      if (blocked !== undefined) snap.blocked = blocked;
      const asking = status.asking;
      if (asking && typeof asking.messageId === "string" && isWellFormedId(asking.messageId, "message") && typeof asking.text === "string") {
        snap.asking = { messageId: asking.messageId, text: stringOf(asking.text, MAX_MESSAGE_CHARS)! };
      }
      const spent = spendFrom(status.spent);
      if (spent) snap.spent = spent;
    }
    if (status && Number.isSafeInteger(status.pid) && status.pid > 0) this.pids.set(agentId, status.pid);
    else this.pids.delete(agentId);
    const deadMs = status ? this.deadFor(agentId, status.pid) : undefined;
    if (deadMs !== undefined) snap.piGone = true;
    if (exit) snap.exited = exit;
    else if (deadMs !== undefined && deadMs >= (this.o.deadPidGraceMs ?? 3000))
      snap.exited = { code: null, signal: null, at: new Date().toISOString(), inferred: true };
    return snap;
  }

  /**
   * Where the multiplexer cannot report pi's exit itself, report-exit.sh writes exit.json when
   * pi ends, but not when the pane itself went: then the multiplexer says [pane_gone]. When the
   * multiplexer cannot answer either (its server is gone), the pid the sheep reported in
   * status.json is the last witness: dead for longer than the multiplexer needs to speak, it
   * counts as exited. That holds for a shepherd that never saw the pid alive too (one restarted
   * after the sheep died), or its wait would run to its deadline. A pid that is not a positive integer is no witness: kill(0) and kill(-1) ask
   * about groups, and status.json may be corrupt. Returns how long the pid has been seen dead.
   */
  private deadFor(agentId: string, pid: unknown): number | undefined {
    if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
    if (pidRunning(pid as number)) {
      this.deadSince.delete(agentId);
      return undefined;
    }
    const since = this.deadSince.get(agentId) ?? Date.now();
    this.deadSince.set(agentId, since);
    return Date.now() - since;
  }

  running(agentId: string): boolean | undefined {
    const pid = this.pids.get(agentId);
    return pid === undefined ? undefined : pidRunning(pid);
  }

  async result(agentId: string, promptId: string): Promise<SheepResult | undefined> {
    const read = await readJsonBounded<ResultFile>(this.layout(agentId).outboxFile(promptId), "result");
    return resultOf(read, promptId);
  }

  async submit(agentId: string, delivery: Delivery): Promise<void> {
    const layout = this.layout(agentId);
    const submittedAt = new Date().toISOString();
    const item: InboxItem =
      delivery.kind === "prompt"
        ? { promptId: delivery.promptId, text: delivery.text, submittedAt, ...(delivery.budget ? { budget: delivery.budget } : {}) }
        : delivery.kind === "steer"
          ? { kind: "steer", steerId: delivery.steerId, target: delivery.target, text: delivery.text, submittedAt }
          : delivery.kind === "renew"
            ? { kind: "renew", renewId: delivery.renewId, submittedAt }
            : { kind: "interrupt", interruptId: delivery.interruptId, target: delivery.target, submittedAt };
    const id =
      delivery.kind === "prompt"
        ? delivery.promptId
        : delivery.kind === "steer"
          ? delivery.steerId
          : delivery.kind === "renew"
            ? delivery.renewId
            : delivery.interruptId;
    await writeJsonAtomic(layout.inboxFile(await this.nextSeq(layout.inbox), id), item);
  }

  /**
   * The sheep takes inbox files in name order, so each delivery's sequence is above every other
   * waiting there: also after a reload (a new host) or a clock set back.
   */
  private async nextSeq(inbox: string): Promise<string> {
    let highest = 0;
    for (const name of await readdir(inbox).catch(() => [] as string[])) {
      const m = INBOX_FILE.exec(name);
      if (m) highest = Math.max(highest, Number(m[1]));
    }
    this.lastSeq = Math.max(Date.now() * 1000, this.lastSeq + 1, highest + 1);
    return String(this.lastSeq).padStart(16, "0");
  }

  async messages(agentId: string): Promise<SheepMessage[]> {
    const cached = this.logs.get(agentId);
    // A log past the bound is not the sheep's (its tool stops there): only what it may hold is read.
    const read = await readBounded(this.layout(agentId).messages, { max: READ_LIMITS.messages, over: "head" });
    if (!read.ok) {
      // Never fewer messages than were seen: a count read against a shorter list would go back,
      // and the messages past it would be pushed (and be unread) again.
      if (cached) return cached.messages;
      if (read.why === "missing") return [];
      throw new ShepherdError("messages_unreadable", `sheep ${agentId}: ${refusalText("messages.jsonl", read)}; its messages cannot be listed.`);
    }
    const key = `${read.ino}:${read.size}:${read.mtimeMs}`;
    if (cached && cached.key === key) return cached.messages;
    const messages = parseMessageLog(read.data.toString("utf8"));
    // A log rewritten shorter (only ever appended to by the sheep's tool) keeps what was seen.
    if (cached && messages.length < cached.messages.length) return cached.messages;
    this.logs.set(agentId, { key, messages });
    return messages;
  }

  async replies(agentId: string): Promise<Map<string, "replied" | "expired">> {
    const layout = this.layout(agentId);
    const out = new Map<string, "replied" | "expired">();
    for (const name of await readdir(layout.replies).catch(() => [] as string[])) {
      const messageId = name.replace(/\.json$/, "");
      if (!name.endsWith(".json") || !isWellFormedId(messageId, "message")) continue;
      const r = replyState(await readJsonBounded<ReplyFile>(layout.replyFile(messageId), "reply"));
      if (r) out.set(messageId, r);
    }
    return out;
  }

  async replyText(agentId: string, messageId: string): Promise<string | undefined> {
    if (!isWellFormedId(messageId, "message")) return undefined;
    const r = jsonValue(await readJsonBounded<ReplyFile>(this.layout(agentId).replyFile(messageId), "reply"));
    return typeof r === "object" && r !== null && "text" in r && typeof r.text === "string" ? r.text : undefined;
  }

  async reply(agentId: string, messageId: string, text: string): Promise<ReplyOutcome> {
    const path = this.layout(agentId).replyFile(messageId);
    const reply: ReplyFile = { messageId, text, at: new Date().toISOString() };
    if (await writeJsonExclusive(path, reply)) return "delivered";
    return replyState(await readJsonBounded<ReplyFile>(path, "reply")) === "expired" ? "expired" : "already_replied";
  }

  subscribe(agentId: string, onChange: () => void): () => void {
    const layout = this.layout(agentId);
    this.keepEgress(agentId);
    const watchers: FSWatcher[] = [];
    // The poll stands in for fs.watch only until fs.watch shows that it works here: after that
    // it would just wake every waiter to re-read unchanged files.
    let poll: NodeJS.Timeout | undefined = setInterval(onChange, this.o.pollMs ?? 2000);
    poll.unref();
    const watchWorks = () => {
      clearInterval(poll);
      poll = undefined;
    };
    for (const [dir, matters] of [
      [layout.dir, reportName],
      [layout.outbox, resultName],
    ] as const) {
      try {
        // pi appends to session.jsonl in this directory all through a turn, and every atomic
        // write first creates a temp file: waking the waiters for those only costs reads.
        const w = watch(dir, { persistent: false }, (_event, name) => {
          if (poll) watchWorks();
          if (name === null || matters(name)) onChange();
        });
        w.on("error", () => undefined);
        watchers.push(w);
      } catch {
        // the directory may be gone already; the poll still covers it
      }
    }
    return () => {
      clearInterval(poll);
      for (const w of watchers) w.close();
    };
  }

  async conversation(agentId: string, turns: number): Promise<Conversation> {
    // The session the sheep was launched with, found from its id (a resumed sheep's card names the
    // session it continues, checked to be a sheep's): a path recorded in state.json could have
    // been forged to point anywhere.
    const sessionPath = readResumeCard(this.o.agentDir, agentId)?.sessionPath ?? this.layout(agentId).session;
    const tail = await readSessionTail(sessionPath, turns);
    return { sessionPath, ...(tail ? { turns: tail.turns } : {}), earlier: tail?.earlier ?? false };
  }

  async evidencePath(agentId: string, promptId: string): Promise<string> {
    const layout = this.layout(agentId);
    // The sheep can write its own directory: a link there in place of evidence/ would have the
    // patch written wherever it points. Only a real directory is used; anything else goes.
    const there = await lstat(layout.evidence).catch(() => undefined);
    if (there && !there.isDirectory()) await rm(layout.evidence, { force: true });
    await ensurePrivateDir(layout.evidence);
    return layout.evidenceFile(promptId);
  }

  /**
   * A sandboxed sheep this shepherd follows has its egress served: at its start, and again after a
   * reload (attach follows every live sheep), on the same directory its sandbox has bound.
   */
  private keepEgress(agentId: string): void {
    if (!this.o.sandbox?.egress || !isWellFormedId(agentId, "agent")) return;
    const card = readResumeCard(this.o.agentDir, agentId);
    if (card?.definition.sandbox !== true) return;
    this.openEgress(agentId, card.model).catch((e: unknown) => this.o.onWarning?.(`sandboxed sheep ${agentId} has no network now: ${errorText(e)}`));
  }

  private async openEgress(agentId: string, model: string | undefined): Promise<string | undefined> {
    const egress = this.o.sandbox?.egress;
    if (!egress) return undefined;
    const logDir = egressLogDir(this.o.agentDir, agentId);
    await ensurePrivateDir(dirname(logDir));
    await ensurePrivateDir(logDir);
    return egress.open({ agentId, ...(model !== undefined ? { model } : {}), logDir });
  }

  async cleanup(agentId: string): Promise<string | undefined> {
    await this.o.sandbox?.egress?.close(agentId);
    this.deadSince.delete(agentId);
    this.pids.delete(agentId);
    this.logs.delete(agentId);
    const layout = this.layout(agentId);
    // The session file stays: it is the sheep's conversation, and the user may want it. So does
    // the card that resumes it (the shepherd's, outside this directory), while there is a
    // conversation to resume (a resumed sheep's is in the directory of the sheep it continues),
    // and the evidence: the patches of its work, which its results name.
    const card = readResumeCard(this.o.agentDir, agentId);
    if (!card) await rm(layout.resume, { force: true });
    // A sheep that renewed runs on a session file of pi's naming in this directory, which its card names.
    // Its egress log (in the state dir) stays too: what it tried to reach is worth reading after it closed.
    const keep = new Set(["session.jsonl", "evidence", ...(card && dirname(card.sessionPath) === layout.dir ? [basename(card.sessionPath)] : [])]);
    let names: string[];
    try {
      names = await readdir(layout.dir);
    } catch {
      return undefined;
    }
    await Promise.all(names.filter((n) => !keep.has(n)).map((n) => rm(`${layout.dir}/${n}`, { recursive: true, force: true })));
    // A sheep that never wrote a session leaves no empty directory behind; rmdir keeps a kept session.
    await rmdir(layout.dir).catch(() => undefined);
    return card?.sessionPath ?? (names.includes("session.jsonl") ? layout.session : undefined);
  }

  /** What a sandboxed sheep tried to reach, from the egress log in its directory (kept after it closed). */
  egress(agentId: string, entries: number): Promise<EgressReport | undefined> {
    if (!isWellFormedId(agentId, "agent")) return Promise.resolve(undefined);
    return readEgressReport(egressLogDir(this.o.agentDir, agentId), entries);
  }

  async residentKb(agentId: string): Promise<number | undefined> {
    const pid = this.pids.get(agentId);
    if (pid === undefined) return undefined;
    // Linux's own count of the pid's resident pages; elsewhere the pool counts its estimate.
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb);
  }

  async renewed(agentId: string, sessionPath: string): Promise<string | undefined> {
    const layout = this.layout(agentId);
    // The sheep names the file: taken only as a plain file name in its own directory.
    if (dirname(sessionPath) !== layout.dir || !SESSION_FILE.test(basename(sessionPath))) return undefined;
    const card = jsonValue(readJsonBoundedSync<Record<string, unknown>>(layout.resume, "resume"));
    if (!card || typeof card !== "object" || card.agentId !== agentId) return undefined;
    // The card names the file, never a path: the directory stays the one its id derives.
    await writeJsonAtomic(layout.resume, { ...card, sessionFile: basename(sessionPath) });
    return sessionPath;
  }

  async relabel(agentId: string, label: string): Promise<void> {
    const layout = this.layout(agentId);
    // Our own card, written at prepare: only its label changes, so a bad one is left as it is.
    const card = jsonValue(readJsonBoundedSync<Record<string, unknown>>(layout.resume, "resume"));
    if (card && typeof card === "object" && card.agentId === agentId) await writeJsonAtomic(layout.resume, { ...card, label });
  }

  async discard(agentId: string): Promise<void> {
    if (!isWellFormedId(agentId, "agent")) return;
    await this.o.sandbox?.egress?.close(agentId);
    this.deadSince.delete(agentId);
    this.logs.delete(agentId);
    await rm(this.layout(agentId).dir, { recursive: true, force: true });
    await rm(egressLogDir(this.o.agentDir, agentId), { recursive: true, force: true });
    await rm(this.layout(agentId).resume, { force: true });
  }

  async resumeCard(agentId: string): Promise<ResumeCard | undefined> {
    return readResumeCard(this.o.agentDir, agentId);
  }

  async resumeCards(): Promise<ResumeCard[]> {
    return readResumeCards(this.o.agentDir);
  }
}

/**
 * The result file as the core may use it: only its known fields, each of its type (the file is
 * the sheep's); one that is there but was not read settles the prompt failed, saying why.
 */
function resultOf(read: JsonRead<unknown>, promptId: string): SheepResult | undefined {
  if (!read.ok) {
    if (read.why === "missing" || read.why === "invalid") return undefined;
    const code = read.why === "too_large" ? "result_too_large" : "result_unreadable";
    const reason = `${refusalText(`the sheep's result file outbox/${promptId}.json`, read)}; the sheep's session file still holds its answer (action "read").`;
    return { promptId, status: "failed", text: "", refused: { code, reason } };
  }
  return sheepResultOf(read.value, promptId);
}

/** A reply file's word: an expiry note, or a reply (any other file there holds the name, so a reply cannot be written). */
function replyState(read: JsonRead<ReplyFile>): "replied" | "expired" | undefined {
  if (!read.ok) return read.why === "missing" || read.why === "invalid" ? undefined : "replied";
  const r = read.value;
  return typeof r === "object" && r !== null && "expired" in r && r.expired === true ? "expired" : "replied";
}

/** exit.json as written by report-exit.sh; anything else in its place is no report. */
function exitReport(v: unknown): ExitReport | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const { code, signal, at } = v as Record<string, unknown>;
  if (!(code === null || Number.isSafeInteger(code)) || !(signal === null || (typeof signal === "string" && /^SIG[A-Z0-9+]{1,14}$/.test(signal))))
    return undefined;
  if (code === null && signal === null) return undefined;
  return { code: code as number | null, signal: signal as string | null, at: timeOf(at) ?? new Date().toISOString() };
}
