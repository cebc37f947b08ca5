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
