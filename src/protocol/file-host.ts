import { watch, type FSWatcher } from "node:fs";
import { readdir, rm, writeFile } from "node:fs/promises";
import { buildLaunchSpec } from "../launch/spec.js";
import type { PreparedSheep, PrepareRequest, SheepHost, SheepResult, SheepSnapshot } from "../ports/sheep-host.js";
import { ensurePrivateDir, readJson, writeJsonAtomic } from "./files.js";
import { sheepDir, sheepLayout } from "./layout.js";
import type { ExitReport, InboxPrompt, ResultFile, StatusReport } from "./messages.js";

export interface FileHostOptions {
  agentDir: string;
  piCommand: readonly string[];
  nodePath: string;
  launcherPath: string;
  sheepExtension: string;
  env: NodeJS.ProcessEnv;
  depth: number;
  extraPiArgs?: readonly string[];
  /** Fallback poll for file systems where fs.watch misses events. */
  pollMs?: number;
}

/** The sheep protocol on disk: prompts and results travel as files, never as keystrokes. */
export class FileSheepHost implements SheepHost {
  constructor(private readonly o: FileHostOptions) {}

  private layout(agentId: string) {
    return sheepLayout(sheepDir(this.o.agentDir, agentId));
  }

  async prepare(req: PrepareRequest): Promise<PreparedSheep> {
    const layout = this.layout(req.agentId);
    await ensurePrivateDir(layout.dir);
    await ensurePrivateDir(layout.inbox);
    await ensurePrivateDir(layout.outbox);
    const systemPrompt = req.definition.systemPrompt?.trim();
    if (systemPrompt) await writeFile(layout.systemPrompt, systemPrompt + "\n", { mode: 0o600 });
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
      hasSystemPrompt: Boolean(systemPrompt),
    });
    await writeJsonAtomic(layout.spec, spec);
    return { sessionPath: layout.session, launcherArgv: [this.o.nodePath, this.o.launcherPath, layout.spec] };
  }

  async snapshot(agentId: string): Promise<SheepSnapshot> {
    const layout = this.layout(agentId);
    const [status, exit] = await Promise.all([
      readJson<StatusReport>(layout.status),
      readJson<ExitReport>(layout.exit),
    ]);
    const snap: SheepSnapshot = {};
    if (status) {
      snap.ready = { pid: status.pid, readyAt: status.readyAt, ...(status.sessionPath ? { sessionPath: status.sessionPath } : {}) };
      if (status.blocked !== undefined) snap.blocked = status.blocked;
    }
    if (exit) snap.exited = exit;
    return snap;
  }

  async result(agentId: string, promptId: string): Promise<SheepResult | undefined> {
    return readJson<ResultFile>(this.layout(agentId).outboxFile(promptId));
  }

  async submit(agentId: string, promptId: string, text: string): Promise<void> {
    const layout = this.layout(agentId);
    const prompt: InboxPrompt = { promptId, text, submittedAt: new Date().toISOString() };
    await writeJsonAtomic(layout.inboxFile(promptId), prompt);
  }

  subscribe(agentId: string, onChange: () => void): () => void {
    const layout = this.layout(agentId);
    const watchers: FSWatcher[] = [];
    for (const dir of [layout.dir, layout.outbox]) {
      try {
        const w = watch(dir, { persistent: false }, () => onChange());
        w.on("error", () => undefined);
        watchers.push(w);
      } catch {
        // the directory may be gone already; the poll below still covers it
      }
    }
    const poll = setInterval(onChange, this.o.pollMs ?? 2000);
    poll.unref();
    return () => {
      clearInterval(poll);
      for (const w of watchers) w.close();
    };
  }

  async cleanup(agentId: string): Promise<void> {
    const layout = this.layout(agentId);
    // The session file stays: it is the sheep's conversation, and the user may want it.
    let names: string[];
    try {
      names = await readdir(layout.dir);
    } catch {
      return;
    }
    await Promise.all(
      names
        .filter((n) => n !== "session.jsonl")
        .map((n) => rm(`${layout.dir}/${n}`, { recursive: true, force: true })),
    );
  }
}
