import { execa } from "execa";

export interface TmuxCliOptions {
  /** Private server socket (tmux -S); unset means the default server or the one in $TMUX. */
  socket?: string;
  bin?: string;
  env?: NodeJS.ProcessEnv;
}

export class TmuxError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly exitCode: number | undefined,
    /** What tmux printed before failing: in a command list, the output of the commands that ran. */
    readonly stdout = "",
  ) {
    super(`tmux ${args[0] ?? ""} failed: ${stderr.trim() || `exit ${exitCode}`}`);
  }

  /**
   * The server is not there at all: every pane on it is gone. Only a missing socket (tmux 3.3
   * says "error connecting to S (No such file or directory)") or one that refuses connections
   * ("no server running on S") means that. "error connecting to S (Resource temporarily
   * unavailable | Too many open files | Permission denied)" is a client that could not ask, and
   * "server exited unexpectedly" a server that died mid-call: neither says the panes are gone.
   */
  get noServer(): boolean {
    return /no server running on |error connecting to .*\((No such file or directory|Connection refused)\)/i.test(this.stderr);
  }

  get noSuchTarget(): boolean {
    return /can't find (pane|window|session)|no such (pane|window|session)/i.test(this.stderr);
  }
}

/** Runs tmux with an argv array; never through a shell. */
export class TmuxCli {
  constructor(private readonly o: TmuxCliOptions = {}) {}

  get socket(): string | undefined {
    return this.o.socket;
  }

  async run(args: readonly string[]): Promise<string> {
    // -u: without a UTF-8 locale (an ssh session to a host that sets no LANG) tmux prints a tab of
    // a format as "_" and mangles every non-ASCII label; the pane table is tab-separated.
    const full = ["-u", ...(this.o.socket ? ["-S", this.o.socket] : []), ...args];
    const r = await execa(this.o.bin ?? "tmux", full, {
      reject: false,
      stdin: "ignore",
      env: this.o.env ?? process.env,
      extendEnv: false,
      timeout: 15_000,
    });
    if (r.exitCode === undefined) {
      // tmux itself could not run (not installed, not executable): not a tmux answer
      throw Object.assign(new Error(r.message), { code: (r as { code?: string }).code });
    }
    if (r.exitCode !== 0 || r.failed) throw new TmuxError(args, String(r.stderr || r.message || ""), r.exitCode, String(r.stdout ?? ""));
    return String(r.stdout);
  }
}

/** What `tmux -V` prints (e.g. "tmux 3.3a"), or undefined when tmux cannot be run. */
export async function tmuxVersion(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await execa("tmux", ["-V"], { reject: false, env, extendEnv: false, stdin: "ignore", timeout: 10_000 });
  return r.exitCode === 0 ? String(r.stdout).trim() : undefined;
}
