/**
 * What an end-to-end file stands on: a temp dir, a private tmux, the scripted model, an agent dir
 * on it, the directory the shepherd runs in, the shepherd's env, and the shepherds started there.
 * cleanup() ends all of it by the handles that started it, newest first; a setup that fails part
 * of the way ends what it had started before it throws, so no file leaks a tmux server or a model.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentDirOptions, makeAgentDir, shepherdEnv } from "./e2e-env.ts";
import { killSheep } from "./leftovers.ts";
import { RpcShepherd } from "./rpc-shepherd.ts";
import { Scene } from "./scene.ts";
import { type ScriptedModel, startScriptedModel } from "./scripted-model.ts";
import { type PrivateSocket, type PrivateTmux, privateSocketOnly, startPrivateTmux } from "./tmux-server.ts";

export type TmuxKind = "server" | "socket";

export interface E2eWorldOptions<K extends TmuxKind> {
  agent?: AgentDirOptions;
  /** A directory under the temp dir for the shepherd to run in (true: "work"); without one it runs in the temp dir. */
  work?: boolean | string;
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
  agentDir: string;
  /** The work dir, or the temp dir when there is none. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A real pi shepherd over RPC in this world, stopped by cleanup(). */
  shepherd(o?: ShepherdOptions): RpcShepherd;
  /** A shepherd wrapped in a Scene, whose cleanup() runs in the world's. */
  scene(o?: ShepherdOptions): Scene;
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
    ends.push(() => rm(dir, { recursive: true, force: true }));
    const tmux = (o.tmux === "socket" ? await privateSocketOnly() : await startPrivateTmux()) as E2eWorld<K>["tmux"];
    ends.push(() => tmux.cleanup());
    const model = await startScriptedModel();
    ends.push(() => model.close());
    const agentDir = await makeAgentDir(join(dir, "agent"), model.baseUrl, o.agent);
    // A sheep outlives a shepherd that was killed or never got to close it; found by its sheep directory, by pid.
    ends.push(() => killSheep(agentDir, []));
    const cwd = o.work ? join(dir, o.work === true ? "work" : o.work) : dir;
    if (cwd !== dir) await mkdir(cwd, { recursive: true });
    const env = shepherdEnv(agentDir, { PI_SHEPHERD_RUNTIME: "tmux", PI_SHEPHERD_TMUX_SOCKET: tmux.socket, ...o.env });
    const start = (s: ShepherdOptions = {}) => RpcShepherd.start({ cwd: s.cwd ?? cwd, env: s.env ?? env, extraArgs: s.extraArgs ?? [] });
    return {
      dir,
      tmux,
      model,
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
