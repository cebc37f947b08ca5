/**
 * Starts a private fake herdr for one test: its own temp state dir and its own tmux server
 * socket. cleanup() stops only that tmux server (by its socket) and removes only that dir.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

export const FAKE_HERDR_DIR = fileURLToPath(new URL("./fake-herdr/", import.meta.url));

/** One line of calls.jsonl: what the code under test ran. */
export interface FakeHerdrCall {
  ts: string;
  argv: string[];
  /** The caller's HERDR_PANE_ID, null when unset. */
  callerPaneId: string | null;
  callerWorkspaceId: string | null;
  socketPath: string | null;
}

/** Makes the fake answer an error: an envelope `{code, message}`, or raw stderr with an exit code. */
export type FakeHerdrFailure = { command?: string; code: string; message?: string } | { command?: string; stderr: string; exit?: number };

export interface FakeHerdrOptions {
  /** What `herdr --version` reports (FAKE_HERDR_VERSION); default 0.8.0. */
  version?: string;
}

export interface FakeHerdrRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface FakeHerdr {
  /** Absolute path of the fake `herdr` executable. */
  bin: string;
  /** An environment whose PATH finds the fake first, with no HERDR_* or TMUX variables. */
  env: NodeJS.ProcessEnv;
  stateDir: string;
  tmuxSocket: string;
  calls(): Promise<FakeHerdrCall[]>;
  clearCalls(): Promise<void>;
  setDown(down: boolean): Promise<void>;
  inject(failure: FakeHerdrFailure | undefined): Promise<void>;
  /** Runs the fake directly (for setting up a scene), with `extraEnv` added to `env`. */
  herdr(args: readonly string[], extraEnv?: NodeJS.ProcessEnv): Promise<FakeHerdrRun>;
  /** tmux on the fake's private socket. */
  tmux(args: readonly string[]): Promise<string>;
  /** The tmux pane (e.g. "%3") behind a herdr pane id. */
  tmuxPaneOf(herdrPaneId: string): Promise<string>;
  /**
   * A focused workspace standing for the user's own, and the environment of a shepherd pi running
   * in its root pane with the herdr runtime chosen.
   */
  userWorkspace(cwd: string): Promise<{ root: { pane_id: string; tab_id: string; workspace_id: string }; shepherdEnv: NodeJS.ProcessEnv }>;
  cleanup(): Promise<void>;
}

const DROPPED = /^(HERDR_|TMUX$|TMUX_PANE$|PI_SHEPHERD_|FAKE_HERDR_)/;

export async function createFakeHerdr(opts: FakeHerdrOptions = {}): Promise<FakeHerdr> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "fake-herdr-"));
  const stateDir = path.join(dir, "state");
  await mkdir(stateDir);
  const tmuxSocket = path.join(dir, "tmux.sock");
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !DROPPED.test(k)));
  const env: NodeJS.ProcessEnv = {
    ...base,
    PATH: `${FAKE_HERDR_DIR}${path.delimiter}${process.env.PATH ?? ""}`,
    // A predictable pane shell; the developer's rc files have no place in tests.
    SHELL: "/bin/sh",
    FAKE_HERDR_STATE_DIR: stateDir,
    FAKE_HERDR_TMUX_SOCKET: tmuxSocket,
    ...(opts.version ? { FAKE_HERDR_VERSION: opts.version } : {}),
  };
  const bin = path.join(FAKE_HERDR_DIR, "herdr");
  const tmuxEnv = { ...env };

  const fake: FakeHerdr = {
    bin,
    env,
    stateDir,
    tmuxSocket,
    async calls() {
      let text: string;
      try {
        text = await readFile(path.join(stateDir, "calls.jsonl"), "utf8");
      } catch {
        return [];
      }
      return text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as FakeHerdrCall);
    },
    async clearCalls() {
      await rm(path.join(stateDir, "calls.jsonl"), { force: true });
    },
    async setDown(down) {
      const file = path.join(stateDir, "down");
      if (down) await writeFile(file, "");
      else await rm(file, { force: true });
    },
    async inject(failure) {
      const file = path.join(stateDir, "inject.json");
      if (failure) await writeFile(file, JSON.stringify(failure));
      else await rm(file, { force: true });
    },
    async userWorkspace(cwd) {
      const created = await fake.herdr(["workspace", "create", "--cwd", cwd, "--label", "user", "--focus"]);
      if (created.exitCode !== 0) throw new Error(`fake herdr could not create the user's workspace: ${created.stderr}`);
      const root = (JSON.parse(created.stdout) as { result: { root_pane: { pane_id: string; tab_id: string; workspace_id: string } } }).result.root_pane;
      const shepherdEnv: NodeJS.ProcessEnv = {
        ...env,
        PI_SHEPHERD_RUNTIME: "herdr",
        PI_SHEPHERD_HERDR_BIN: bin,
        HERDR_ENV: "1",
        HERDR_SOCKET_PATH: path.join(stateDir, "herdr.sock"),
        HERDR_WORKSPACE_ID: root.workspace_id,
        HERDR_TAB_ID: root.tab_id,
        HERDR_PANE_ID: root.pane_id,
      };
      return { root, shepherdEnv };
    },
    async herdr(args, extraEnv = {}) {
      const r = await execa(bin, [...args], { env: { ...env, ...extraEnv }, extendEnv: false, reject: false, stdin: "ignore", stripFinalNewline: false });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    async tmux(args) {
      const r = await execa("tmux", ["-S", tmuxSocket, ...args], { env: tmuxEnv, extendEnv: false, stdin: "ignore" });
      return r.stdout;
    },
    async tmuxPaneOf(herdrPaneId) {
      const state = JSON.parse(await readFile(path.join(stateDir, "state.json"), "utf8")) as {
        panes: Record<string, { tmux: string }>;
      };
      const pane = state.panes[herdrPaneId];
      if (!pane) throw new Error(`fake herdr has no pane ${herdrPaneId}`);
      return pane.tmux;
    },
    async cleanup() {
      await execa("tmux", ["-S", tmuxSocket, "kill-server"], { env: tmuxEnv, extendEnv: false, reject: false, stdin: "ignore" });
      await rm(dir, { recursive: true, force: true });
    },
  };
  return fake;
}
