import { execa } from "execa";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A private tmux server for one test file, with a "user" session whose pane the shepherd did
 * not create. Ended by its own socket, never by process name.
 */
export interface PrivateTmux {
  dir: string;
  socket: string;
  userPane: string;
  tmux(args: string[]): Promise<string>;
  /** Env as if the shepherd ran inside the user's pane of this server. */
  insideEnv(): NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

export async function startPrivateTmux(): Promise<PrivateTmux> {
  const which = await execa("tmux", ["-V"], { reject: false });
  if (which.exitCode !== 0) throw new Error("tmux is required for these tests; install it (apt-get install tmux)");
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-tmux-"));
  const socket = join(dir, "sock");
  const tmux = async (args: string[]) => String((await execa("tmux", ["-S", socket, ...args], { stdin: "ignore" })).stdout);
  await tmux(["-f", "/dev/null", "new-session", "-d", "-s", "user", "-x", "160", "-y", "40"]);
  await tmux(["set-option", "-g", "base-index", "0"]);
  const userPane = (await tmux(["display-message", "-p", "-t", "user", "#{pane_id}"])).trim();
  const pid = (await tmux(["display-message", "-p", "#{pid}"])).trim();
  return {
    dir,
    socket,
    userPane,
    tmux,
    insideEnv: () => ({ ...process.env, TMUX: `${socket},${pid},0`, TMUX_PANE: userPane }),
    cleanup: async () => {
      await execa("tmux", ["-S", socket, "kill-server"], { reject: false });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A private socket path with no server behind it, the way a person outside tmux starts: the
 * shepherd starts the server itself, and the server ends when its last session closes. No
 * keeper session, so a test sees what happens when panes are numbered from %0 again.
 */
export interface PrivateSocket {
  dir: string;
  socket: string;
  /** Throws when tmux fails, e.g. when no server runs on the socket. */
  tmux(args: string[]): Promise<string>;
  serverRunning(): Promise<boolean>;
  /** Polls until no server answers on the socket; false if one still does at the deadline. */
  serverGone(withinMs?: number): Promise<boolean>;
  cleanup(): Promise<void>;
}

export async function privateSocketOnly(): Promise<PrivateSocket> {
  const which = await execa("tmux", ["-V"], { reject: false });
  if (which.exitCode !== 0) throw new Error("tmux is required for these tests; install it (apt-get install tmux)");
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-sock-"));
  const socket = join(dir, "sock");
  const tmux = async (args: string[]) => String((await execa("tmux", ["-S", socket, ...args], { stdin: "ignore" })).stdout);
  const serverRunning = async () => (await execa("tmux", ["-S", socket, "list-sessions"], { reject: false, stdin: "ignore" })).exitCode === 0;
  return {
    dir,
    socket,
    tmux,
    serverRunning,
    serverGone: async (withinMs = 30_000) => {
      // The server exits a moment after its last session closes, not within the kill-pane call.
      const deadline = Date.now() + withinMs;
      while (await serverRunning()) {
        if (Date.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, 100));
      }
      return true;
    },
    cleanup: async () => {
      await execa("tmux", ["-S", socket, "kill-server"], { reject: false, stdin: "ignore" });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
