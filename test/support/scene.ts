/**
 * One real pi shepherd on one agent directory, seen through its tool calls, with the checks
 * every end-to-end file makes: a clear result or error, and nothing left behind.
 */
import assert from "node:assert/strict";
import { execa } from "execa";
import { killSheep, livingSheep, notKept, sheepFiles, sheepPid } from "./leftovers.ts";
import type { RpcShepherd, ToolOutcome } from "./rpc-shepherd.ts";
import type { ScriptedModel } from "./scripted-model.ts";

export type Item = { promptId: string; status: string; text?: string; error?: string };

/** One shepherd on one agent directory, with the helpers every part uses. */
export class Scene {
  readonly pids: number[] = [];
  constructor(
    readonly shepherd: RpcShepherd,
    readonly agentDir: string,
  ) {}

  ok(args: unknown): Promise<ToolOutcome> {
    return this.shepherd.ok(args);
  }

  async fails(args: unknown, code: RegExp): Promise<string> {
    const r = await this.shepherd.call(args);
    assert.equal(r.isError, true, `expected an error, got: ${r.text}`);
    assert.match(r.text, code);
    return r.text;
  }

  async start(label: string, extra: Record<string, unknown> = {}) {
    const r = await this.ok({ action: "start", agent: "echo", label, ...extra });
    const agent = r.details.agent as { agentId: string; paneId: string };
    const pid = await sheepPid(this.agentDir, agent.agentId);
    this.pids.push(pid);
    return { ...agent, pid };
  }

  async prompt(agentId: string, message: string): Promise<string> {
    return ((await this.ok({ action: "prompt", agentId, message })).details.prompt as { promptId: string }).promptId;
  }

  async wait(promptId: string, timeout: number): Promise<Item> {
    return ((await this.ok({ action: "wait", promptId, timeout })).details.results as Item[])[0]!;
  }

  async state(agentId: string): Promise<{ state: string; paneAlive: boolean; activePromptId?: string }> {
    return (await this.ok({ action: "status", agentId })).details.status as { state: string; paneAlive: boolean; activePromptId?: string };
  }

  /** For after(): stops the shepherd, then kills by pid whatever sheep a failed test left. */
  async cleanup() {
    await this.shepherd.stop().catch(() => undefined);
    await killSheep(this.agentDir, this.pids);
  }

  /** Nothing of this scene's sheep runs any more; only session files and resume cards (kept by design) remain. */
  async assertNothingLeft(panes: () => Promise<string[]>, baseline: readonly string[]) {
    // A delegated sheep closes after its call returned, off the call's path: given a moment.
    for (let i = 0; i < 100 && (await panes()).some((p) => !baseline.includes(p)); i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      (await panes()).filter((p) => !baseline.includes(p)),
      [],
      "no pane the test created remains",
    );
    assert.deepEqual(await livingSheep(this.agentDir, this.pids), [], "no sheep pi is alive");
    // The close removes a sheep's files once its pi has exited, after its pane went: on a busy machine a
    // moment after the pane is gone. Given up to 10 s, as the pane was.
    let left = notKept(await sheepFiles(this.agentDir));
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = notKept(await sheepFiles(this.agentDir));
    }
    assert.deepEqual(left, [], "no sheep file other than session files, resume cards and evidence remains");
  }
}

export async function untilLogged(model: ScriptedModel, tag: string) {
  for (let i = 0; i < 600 && !model.log.some((l) => l.tag === tag); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(
    model.log.some((l) => l.tag === tag),
    `the sheep's model request ${tag} arrived`,
  );
}

export function tmuxPanes(socket: string) {
  return async () => {
    const r = await execa("tmux", ["-S", socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false, stdin: "ignore" });
    return r.exitCode === 0 ? String(r.stdout).split("\n").filter(Boolean) : [];
  };
}
