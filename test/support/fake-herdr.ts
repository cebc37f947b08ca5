/**
 * Starts a private fake herdr for one test: its own temp state dir and its own tmux server
 * socket. cleanup() stops only that tmux server (by its socket) and removes only that dir.
 */
import { chmod, mkdtemp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

export const FAKE_HERDR_DIR = fileURLToPath(new URL("./fake-herdr/", import.meta.url));

/** Quoted for sh: the paths are the test's own, but a quote costs nothing. */
const shQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * A node for a remote host's agent whose environment finds the fake herdr first, with its state and
 * tmux socket in `dir` (what a person's herdr install would be on that machine). Returns its path.
 */
export async function nodeWithFakeHerdr(dir: string, version: string): Promise<string> {
  const node = path.join(dir, "node-with-herdr");
  await writeFile(
    node,
    [
      "#!/bin/sh",
      `PATH=${shQuote(FAKE_HERDR_DIR)}:$PATH`,
      `FAKE_HERDR_STATE_DIR=${shQuote(path.join(dir, "herdr-state"))}`,
      `FAKE_HERDR_TMUX_SOCKET=${shQuote(path.join(dir, "herdr-tmux.sock"))}`,
      `FAKE_HERDR_VERSION=${shQuote(version)}`,
      "SHELL=/bin/sh",
      "export PATH FAKE_HERDR_STATE_DIR FAKE_HERDR_TMUX_SOCKET FAKE_HERDR_VERSION SHELL",
      'mkdir -p "$FAKE_HERDR_STATE_DIR"',
      `exec ${shQuote(process.execPath)} "$@"`,
      "",
    ].join("\n"),
  );
  await chmod(node, 0o700);
  return node;
}

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

/**
 * The herdr versions every herdr suite runs on: the floor's generation (0.7.5, protocol 17, the CLI
 * 0.8.0 shares), 0.8.2 (protocol 20) and 0.9.x (protocol 22). FAKE_HERDR_VERSIONS (comma-separated)
 * narrows or changes the list, e.g. to run one version while debugging.
 */
export const FAKE_HERDR_VERSIONS: readonly string[] = process.env.FAKE_HERDR_VERSIONS?.split(",")
  .map((v) => v.trim())
  .filter(Boolean) ?? ["0.7.5", "0.8.2", "0.9.4"];

export interface FakeHerdrOptions {
  /** What `herdr --version` reports (FAKE_HERDR_VERSION): the binary on PATH; default 0.8.0. */
  version?: string;
  /** The running server's version, when it differs from the binary's (a protocol mismatch). */
  serverVersion?: string;
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
  /** The running server's version from now on (undefined: the binary's own). */
  setServerVersion(version: string | undefined): Promise<void>;
  /** The pid of a server started with `herdr server` (by the code under test), if one runs. */
  serverPid(): Promise<number | undefined>;
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
  const serverFile = path.join(stateDir, "server.json");
  const readServer = async (): Promise<{ version?: string; pid?: number } | undefined> => {
    try {
      return JSON.parse(await readFile(serverFile, "utf8")) as { version?: string; pid?: number };
    } catch {
      return undefined;
    }
  };
  if (opts.serverVersion) await writeFile(serverFile, JSON.stringify({ version: opts.serverVersion }));

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
    async setServerVersion(version) {
      if (version) await writeFile(serverFile, JSON.stringify({ ...(await readServer()), version }));
      else await rm(serverFile, { force: true });
    },
    async serverPid() {
      const pid = (await readServer())?.pid;
      if (pid === undefined) return undefined;
      try {
        process.kill(pid, 0);
        return pid;
      } catch {
        return undefined;
      }
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
      // A server the code under test started with `herdr server`: stopped by its pid.
      const pid = await fake.serverPid();
      if (pid !== undefined) process.kill(pid, "SIGTERM");
      for (let i = 0; pid !== undefined && i < 100 && (await fake.serverPid()) === pid; i++) await new Promise((r) => setTimeout(r, 20));
      await execa("tmux", ["-S", tmuxSocket, "kill-server"], { env: tmuxEnv, extendEnv: false, reject: false, stdin: "ignore" });
      // Each saved machine's "remote server" has its own tmux socket.
      const machines = await readdir(path.join(stateDir, "machines")).catch(() => [] as string[]);
      for (const id of machines) {
        const socket = path.join(stateDir, "machines", id, "tmux.sock");
        await execa("tmux", ["-S", socket, "kill-server"], { env: tmuxEnv, extendEnv: false, reject: false, stdin: "ignore" });
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  return fake;
}
