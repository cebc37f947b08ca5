/**
 * What an end-to-end file stands on: a temp dir, a private tmux, the scripted model (and more
 * models as providers), an agent dir on it, the directory the shepherd runs in (a git repository
 * if asked), the shepherd's env (inside a fake herdr if asked), and the shepherds started there,
 * over RPC or in pi's TUI. cleanup() ends all of it by the handles that started it, newest first;
 * a setup that fails part of the way ends what it had started before it throws, so no file leaks
 * a tmux server or a model.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentDirOptions, makeAgentDir, shepherdEnv } from "./e2e-env.ts";
import { createFakeHerdr, type FakeHerdr, type FakeHerdrOptions } from "./fake-herdr.ts";
import { makeRepo } from "./git-repo.ts";
import { killSheep, sheepProcesses } from "./leftovers.ts";
import { RpcShepherd } from "./rpc-shepherd.ts";
import { Scene } from "./scene.ts";
import { type ScriptedModel, type ScriptedModelOptions, startScriptedModel } from "./scripted-model.ts";
import { type PrivateSocket, type PrivateTmux, privateSocketOnly, startPrivateTmux } from "./tmux-server.ts";
import { type TuiOptions, TuiShepherd } from "./tui-shepherd.ts";

export type TmuxKind = "server" | "socket";

export interface E2eWorldOptions<K extends TmuxKind> {
  /** Runs in the new temp dir before anything starts there, e.g. to set a variable the tmux server must inherit. */
  prepare?: (dir: string) => unknown;
  /** The agent dir's path under the temp dir (default "agent"), e.g. a hostile name. */
  agentDirName?: string;
  /** The agent dir's contents; a function gets the temp dir first (to put a file there that the settings name). */
  agent?: AgentDirOptions | ((dir: string) => AgentDirOptions | Promise<AgentDirOptions>);
  /** The scripted model's options (e.g. its fallback reply). */
  model?: ScriptedModelOptions;
  /** More providers, each a scripted model of its own serving "scripted-model" (e.g. one a test takes away). */
  providers?: string[];
  /** A directory under the temp dir for the shepherd to run in (true: "work"); without one it runs in the temp dir. */
  work?: boolean | string;
  /** The work dir ("work" unless named) is a git repository with these files committed on main. */
  repo?: Record<string, string>;
  /** The shepherd runs inside a fake herdr (its panes real tmux panes of its own server), in its user's workspace, with the herdr runtime. */
  herdr?: true | FakeHerdrOptions;
  /** "server" (default): a private server with a user session; "socket": a socket path only, as outside tmux, where the shepherd starts the server. */
  tmux?: K;
  /** More variables of the shepherd's env. */
  env?: NodeJS.ProcessEnv;
}

export interface ShepherdOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  extraArgs?: string[];
}

export interface E2eWorld<K extends TmuxKind = "server"> {
  dir: string;
  tmux: K extends "socket" ? PrivateSocket : PrivateTmux;
  model: ScriptedModel;
  /** The models of the providers asked for, by name. */
  providers: Record<string, ScriptedModel>;
  /** With the herdr option: the fake and the root pane of the user's workspace, where the shepherd runs. */
  herdr?: { fake: FakeHerdr; root: { pane_id: string; tab_id: string; workspace_id: string } };
  agentDir: string;
  /** The work dir, or the temp dir when there is none. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A real pi shepherd over RPC in this world, stopped by cleanup(). */
  shepherd(o?: ShepherdOptions): RpcShepherd;
  /** A shepherd wrapped in a Scene, whose cleanup() runs in the world's. */
  scene(o?: ShepherdOptions): Scene;
  /** A real pi shepherd in pi's TUI, in a tmux server of its own (its sheep too, unless sheepSocket), on this agent dir. */
  tui(o?: Partial<TuiOptions>): Promise<TuiShepherd>;
  /** Something a file started on top of the world, ended by cleanup() before what it stands on. */
  defer(end: () => unknown): void;
  /** Ends everything started, newest first; each end runs even if one before it threw. Safe to call twice. */
  cleanup(): Promise<void>;
}

export async function e2eWorld<K extends TmuxKind = "server">(name: string, o: E2eWorldOptions<K> = {}): Promise<E2eWorld<K>> {
  const ends: (() => unknown)[] = [];
  const cleanup = async () => {
    const errors: unknown[] = [];
    for (let end = ends.pop(); end; end = ends.pop()) {
      try {
        await end();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "cleaning up the end-to-end world failed");
  };
  try {
    const dir = await mkdtemp(join(tmpdir(), `pi-shepherd-${name}-`));
    // Retries: a sheep's worktree may still be written to for a moment after its pane ended.
    ends.push(() => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }));
    await o.prepare?.(dir);
    const tmux = (o.tmux === "socket" ? await privateSocketOnly() : await startPrivateTmux()) as E2eWorld<K>["tmux"];
    ends.push(() => tmux.cleanup());
    const model = await startScriptedModel(o.model);
    ends.push(() => model.close());
    const providers: Record<string, ScriptedModel> = {};
    for (const provider of o.providers ?? []) {
      const m = await startScriptedModel();
      ends.push(() => m.close());
      providers[provider] = m;
    }
    let herdr: E2eWorld["herdr"];
    let runtimeEnv: NodeJS.ProcessEnv = { PI_SHEPHERD_RUNTIME: "tmux", PI_SHEPHERD_TMUX_SOCKET: tmux.socket };
    if (o.herdr) {
      const fake = await createFakeHerdr(o.herdr === true ? {} : o.herdr);
      ends.push(() => fake.cleanup());
      const inside = await fake.userWorkspace(dir);
      herdr = { fake, root: inside.root };
      runtimeEnv = inside.shepherdEnv;
    }
    const agent = typeof o.agent === "function" ? await o.agent(dir) : o.agent;
    const urls = Object.fromEntries(Object.entries(providers).map(([n, m]) => [n, m.baseUrl]));
    const agentDir = await makeAgentDir(
      join(dir, o.agentDirName ?? "agent"),
      model.baseUrl,
      o.providers ? { ...agent, providers: { ...agent?.providers, ...urls } } : agent,
    );
    // A sheep outlives a shepherd that was killed or never got to close it; found by its sheep directory, by pid.
    ends.push(() => killSheep(agentDir, []));
    const cwd = o.work || o.repo ? join(dir, typeof o.work === "string" ? o.work : "work") : dir;
    if (o.repo) await makeRepo(cwd, o.repo);
    else if (cwd !== dir) await mkdir(cwd, { recursive: true });
    const env = shepherdEnv(agentDir, { ...runtimeEnv, ...o.env });
    const start = (s: ShepherdOptions = {}) => RpcShepherd.start({ cwd: s.cwd ?? cwd, env: s.env ?? env, extraArgs: s.extraArgs ?? [] });
    return {
      dir,
      tmux,
      model,
      providers,
      ...(herdr ? { herdr } : {}),
      agentDir,
      cwd,
      env,
      shepherd: (s) => {
        const shepherd = start(s);
        ends.push(() => shepherd.stop());
        return shepherd;
      },
      scene: (s) => {
        const scene = new Scene(start(s), agentDir);
        ends.push(() => scene.cleanup());
        return scene;
      },
      tui: async (t = {}) => {
        const tui = await TuiShepherd.start({ agentDir, cwd, ...t });
        ends.push(async () => {
          const pids = await sheepProcesses(agentDir).catch(() => [] as number[]);
          await tui.stop();
          await killSheep(agentDir, pids);
        });
        return tui;
      },
      defer: (end) => {
        ends.push(end);
      },
      cleanup,
    };
  } catch (e) {
    await cleanup().catch(() => undefined);
    throw e;
  }
}
