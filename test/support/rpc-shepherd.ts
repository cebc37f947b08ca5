import { execa, type ResultPromise } from "execa";
import { join, resolve } from "node:path";
import { directive } from "./scripted-model.js";

export const repoRoot = resolve(import.meta.dirname, "..", "..");
export const piCli = join(repoRoot, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
/** Node 22 from the node@22 dev dependency: pi 1.6 needs it. */
export const node22 = join(repoRoot, "node_modules", "node", "bin", "node");

export interface ToolOutcome {
  isError: boolean;
  text: string;
  details: Record<string, unknown>;
  updates: { text: string; details: unknown }[];
}

type Event = Record<string, unknown> & { type: string };

/**
 * A real pi shepherd in RPC mode with pi-shepherd loaded. Tool calls are driven through the
 * scripted model: each call() prompts the shepherd with a directive that makes the model call
 * the shepherd tool with exactly the given arguments.
 */
export class RpcShepherd {
  readonly events: Event[] = [];
  readonly stderr: string[] = [];
  private buffer = "";
  private waiters: { match: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  private seq = 0;

  private constructor(readonly proc: ResultPromise) {
    proc.stdout!.on("data", (d: Buffer) => this.onData(d.toString("utf8")));
    proc.stderr!.on("data", (d: Buffer) => this.stderr.push(d.toString("utf8")));
  }

  static start(o: { cwd: string; env: NodeJS.ProcessEnv; extraArgs?: string[] }): RpcShepherd {
    const proc = execa(node22, [piCli, "--mode", "rpc", "--no-session", "-e", join(repoRoot, "extensions", "shepherd.ts"), ...(o.extraArgs ?? [])], {
      cwd: o.cwd,
      env: o.env,
      extendEnv: false,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
    });
    return new RpcShepherd(proc);
  }

  private onData(chunk: string) {
    this.buffer += chunk;
    let i: number;
    while ((i = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, i);
      this.buffer = this.buffer.slice(i + 1);
      if (!line.trim()) continue;
      let e: Event;
      try {
        e = JSON.parse(line) as Event;
      } catch {
        continue;
      }
      this.events.push(e);
      for (const w of [...this.waiters]) {
        if (w.match(e)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    }
  }

  next(match: (e: Event) => boolean, timeoutMs = 60_000): Promise<Event> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`timed out waiting for an RPC event; stderr: ${this.stderr.join("").slice(-2000)}`));
      }, timeoutMs);
      const done = (e: Event) => {
        clearTimeout(timer);
        resolve(e);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  send(cmd: Record<string, unknown>) {
    this.proc.stdin!.write(JSON.stringify(cmd) + "\n");
  }

  async command(cmd: Record<string, unknown>): Promise<Event> {
    const id = `c${++this.seq}`;
    const reply = this.next((e) => e.type === "response" && e.id === id);
    this.send({ ...cmd, id });
    return reply;
  }

  /** Makes the shepherd's model call the tool with these arguments; resolves with the tool's outcome. */
  async call(args: unknown, timeoutMs = 120_000): Promise<ToolOutcome> {
    const tag = `call-${++this.seq}`;
    const start = this.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", timeoutMs);
    const end = this.next((e) => e.type === "tool_execution_end" && e.toolName === "shepherd", timeoutMs);
    const settled = this.next((e) => e.type === "agent_end", timeoutMs);
    const accepted = await this.command({ type: "prompt", message: directive({ tool: { name: "shepherd", arguments: args }, afterTool: "done", tag }) });
    if (accepted.success !== true) throw new Error(`prompt refused: ${JSON.stringify(accepted)}`);
    const started = await start;
    const updates: ToolOutcome["updates"] = [];
    const onUpdate = (e: Event) => {
      if (e.type === "tool_execution_update" && e.toolCallId === started.toolCallId) {
        const pr = e.partialResult as { content?: { text?: string }[]; details?: unknown };
        updates.push({ text: pr?.content?.[0]?.text ?? "", details: pr?.details });
      }
      return false;
    };
    this.waiters.push({ match: onUpdate, resolve: () => undefined });
    const e = await end;
    this.waiters = this.waiters.filter((w) => w.match !== onUpdate);
    await settled;
    const result = e.result as { content?: { type: string; text?: string }[]; details?: Record<string, unknown> };
    return {
      isError: e.isError === true,
      text: (result?.content ?? []).map((c) => c.text ?? "").join(""),
      details: result?.details ?? {},
      updates,
    };
  }

  /** Closes stdin (pi shuts down cleanly); kills this process only if it does not exit. */
  async stop(timeoutMs = 20_000): Promise<void> {
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    await this.proc;
    clearTimeout(timer);
  }
}
