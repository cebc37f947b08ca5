import assert from "node:assert/strict";
import { execa, type Subprocess } from "execa";
import { join, resolve } from "node:path";
import { directive } from "./scripted-model.ts";

export const repoRoot = resolve(import.meta.dirname, "..", "..");
export const piCli = join(repoRoot, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
/** Node 22 from the node@22 dev dependency: pi 1.6 needs it. */
export const node22 = join(repoRoot, "node_modules", "node", "bin", "node");
/**
 * The pi a shepherd under test runs, and the node that runs it: the dev dependency on Node 22 by
 * default; PI_SHEPHERD_TEST_PI_CLI and PI_SHEPHERD_TEST_NODE point a run at another pi (CI runs the
 * lifecycle suite again on pi 0.73 under the machine's own Node 20). Sheep run the same pair.
 */
export const testPiCli = process.env.PI_SHEPHERD_TEST_PI_CLI || piCli;
export const testNode = process.env.PI_SHEPHERD_TEST_NODE || node22;

export interface ToolOutcome {
  isError: boolean;
  text: string;
  details: Record<string, unknown>;
  updates: { text: string; details: unknown }[];
}

type Event = Record<string, unknown> & { type: string };

/** A custom message of pi-shepherd as pi emits it: what the model reads, and the push itself. */
export interface PushedMessage {
  role: "custom";
  customType: string;
  content: string;
  details: Record<string, unknown>;
}

function isPush(e: Event): boolean {
  const m = e.message as { role?: string; customType?: string } | undefined;
  return e.type === "message_end" && m?.role === "custom" && m.customType === "pi-shepherd";
}

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

  private constructor(readonly proc: Subprocess) {
    // Decoded as a stream: a character split between two chunks must not become U+FFFD.
    proc.stdout!.setEncoding("utf8");
    proc.stderr!.setEncoding("utf8");
    proc.stdout!.on("data", (d: string) => this.onData(d));
    proc.stderr!.on("data", (d: string) => this.stderr.push(d));
  }

  /**
   * `extension` loads another extension instead of pi-shepherd (the bench's peer: pi's example
   * subagent); `null` loads none, for an agent dir that has pi-shepherd installed as a package.
   */
  static start(o: { cwd: string; env: NodeJS.ProcessEnv; extraArgs?: string[]; extension?: string | null }): RpcShepherd {
    const extension = o.extension === undefined ? join(repoRoot, "extensions", "shepherd.ts") : o.extension;
    const proc = execa(testNode, [testPiCli, "--mode", "rpc", "--no-session", ...(extension ? ["-e", extension] : []), ...(o.extraArgs ?? [])], {
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
    for (let i = this.buffer.indexOf("\n"); i >= 0; i = this.buffer.indexOf("\n")) {
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
      // A shepherd that ended keeps nothing alive: its waiters' timers must not hold the test's process.
      timer.unref();
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
  /** A call that must succeed: its failure fails the test with the tool's own message. */
  async ok(args: unknown): Promise<ToolOutcome> {
    const r = await this.call(args);
    assert.equal(r.isError, false, `tool call failed: ${r.text}`);
    return r;
  }

  /** `argsTokensPerSec`: the model streams the call's arguments at that rate, as a real model writes them. */
  async call(args: unknown, timeoutMs = 120_000, o: { argsTokensPerSec?: number } = {}): Promise<ToolOutcome> {
    const tag = `call-${++this.seq}`;
    const start = this.next((e) => e.type === "tool_execution_start" && e.toolName === "shepherd", timeoutMs);
    const end = this.next((e) => e.type === "tool_execution_end" && e.toolName === "shepherd", timeoutMs);
    const settled = this.next((e) => e.type === "agent_end", timeoutMs);
    // Awaited in turn below; one that fails while an earlier one is awaited is still this call's, not unhandled.
    for (const p of [start, end, settled]) p.catch(() => undefined);
    const accepted = await this.command({ type: "prompt", message: directive({ tool: { name: "shepherd", arguments: args }, afterTool: "done", tag, ...o }) });
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

  /** The first event (already seen or still to come) that matches. */
  until(match: (e: Event) => boolean, timeoutMs = 60_000): Promise<Event> {
    const seen = this.events.find(match);
    return seen ? Promise.resolve(seen) : this.next(match, timeoutMs);
  }

  /**
   * One model turn that calls the tool once per entry of argsList; pi runs the calls of one turn
   * in parallel. `whileRunning` gets the calls' ids (in argsList order) once all have started, e.g.
   * to send an abort. Outcomes come back in argsList order, each with the index of its end event
   * in `events`, so tests can assert what finished first.
   */
  async callParallel(
    argsList: unknown[],
    o: { timeoutMs?: number; whileRunning?: (toolCallIds: string[]) => Promise<void> } = {},
  ): Promise<(ToolOutcome & { toolCallId: string; endIndex: number })[]> {
    const timeoutMs = o.timeoutMs ?? 120_000;
    const tag = `call-${++this.seq}`;
    const from = this.events.length;
    const settled = this.next((e) => e.type === "agent_end", timeoutMs);
    const message = directive({ tools: argsList.map((a) => ({ name: "shepherd", arguments: a })), afterTool: "done", tag });
    const accepted = await this.command({ type: "prompt", message });
    if (accepted.success !== true) throw new Error(`prompt refused: ${JSON.stringify(accepted)}`);
    // The scripted model names the calls of one turn call_<seq>_<index>.
    const indexOf = (e: Event) => Number(/_(\d+)$/.exec(String(e.toolCallId))?.[1]);
    const starts = await Promise.all(
      argsList.map((_, i) => this.until((e) => this.events.indexOf(e) >= from && e.type === "tool_execution_start" && indexOf(e) === i, timeoutMs)),
    );
    const ids = starts.map((e) => String(e.toolCallId));
    if (o.whileRunning) await o.whileRunning(ids);
    await settled;
    return ids.map((toolCallId) => {
      const endIndex = this.events.findIndex((e, i) => i >= from && e.type === "tool_execution_end" && e.toolCallId === toolCallId);
      if (endIndex < 0) throw new Error(`tool call ${toolCallId} never ended`);
      const end = this.events[endIndex]!;
      const result = end.result as { content?: { type: string; text?: string }[]; details?: Record<string, unknown> };
      const updates = this.events
        .filter((e, i) => i >= from && e.type === "tool_execution_update" && e.toolCallId === toolCallId)
        .map((e) => {
          const pr = e.partialResult as { content?: { text?: string }[]; details?: unknown };
          return { text: pr?.content?.[0]?.text ?? "", details: pr?.details };
        });
      return {
        toolCallId,
        endIndex,
        isError: end.isError === true,
        text: (result?.content ?? []).map((c) => c.text ?? "").join(""),
        details: result?.details ?? {},
        updates,
      };
    });
  }

  /**
   * Runs a slash command the way a client types it (an RPC prompt); resolves once pi has run it,
   * with the notifications it showed, in order.
   */
  async slash(text: string, timeoutMs = 120_000): Promise<{ level: string; text: string }[]> {
    const from = this.events.length;
    const id = `c${++this.seq}`;
    const reply = this.next((e) => e.type === "response" && e.id === id, timeoutMs);
    this.send({ type: "prompt", message: text, id });
    const r = await reply;
    if (r.success !== true) throw new Error(`${text} refused: ${JSON.stringify(r)}`);
    const end = this.events.indexOf(r);
    return this.events
      .slice(from, end)
      .filter((e) => e.type === "extension_ui_request" && e.method === "notify")
      .map((e) => ({ level: String(e.notifyType ?? "info"), text: String(e.message) }));
  }

  /**
   * Answers dialogs (confirm, select, input, editor) as a person would; `answer` returns the
   * response fields, e.g. `{confirmed: true}`. Returns a function that stops answering.
   */
  answerDialogs(answer: (request: Event) => Record<string, unknown>): () => void {
    const dialogs = new Set(["confirm", "select", "input", "editor"]);
    const match = (e: Event) => {
      if (e.type === "extension_ui_request" && dialogs.has(String(e.method))) this.send({ type: "extension_ui_response", id: e.id, ...answer(e) });
      return false;
    };
    this.waiters.push({ match, resolve: () => undefined });
    return () => {
      this.waiters = this.waiters.filter((w) => w.match !== match);
    };
  }

  /** Messages the shepherd pushed into its own conversation (results, questions, delegations), in order. */
  pushes(): PushedMessage[] {
    return this.events.filter(isPush).map((e) => e.message as PushedMessage);
  }

  /** The first pushed message (already seen or still to come) whose details match. */
  async untilPush(match: (details: Record<string, unknown>) => boolean, timeoutMs = 60_000): Promise<PushedMessage> {
    const e = await this.until((x) => isPush(x) && match((x.message as PushedMessage).details), timeoutMs);
    return e.message as PushedMessage;
  }

  /** Resolves once no run of the agent is going (every agent_start has its agent_end). */
  async idle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const starts = this.events.filter((e) => e.type === "agent_start").length;
      const ends = this.events.filter((e) => e.type === "agent_end").length;
      if (starts <= ends) return;
      await this.next((e) => e.type === "agent_end", Math.max(1, deadline - Date.now()));
    }
  }

  /** Closes stdin (pi shuts down cleanly); kills this process only if it does not exit. */
  async stop(timeoutMs = 20_000): Promise<void> {
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    await this.proc;
    clearTimeout(timer);
  }
}
