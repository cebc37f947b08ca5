import { execa } from "execa";
import { shellLine } from "../../src/runtimes/shell-line.ts";
import type { BareMode, BarePane } from "./runtime-fixture.ts";

/**
 * A tmux server on a private socket with a "bench-bare" session for baseline panes, started
 * with /bin/sh as the pane shell so the developer's rc files do not show up in the figures.
 * Ended by its socket only.
 */
export interface PrivateTmux {
  tmux(args: readonly string[]): Promise<string>;
  launch(mode: BareMode, argv: readonly string[], env: Record<string, string>, cwd: string): Promise<BarePane>;
  kill(): Promise<void>;
}

export async function privateTmux(tmuxBin: string, socket: string, env: NodeJS.ProcessEnv): Promise<PrivateTmux> {
  const tmux = async (args: readonly string[]) => String((await execa(tmuxBin, ["-S", socket, ...args], { env, extendEnv: false, stdin: "ignore" })).stdout);
  const has = await execa(tmuxBin, ["-S", socket, "has-session", "-t", "=bench-bare"], { env, extendEnv: false, reject: false, stdin: "ignore" });
  if (has.exitCode !== 0) await tmux(["-f", "/dev/null", "new-session", "-d", "-s", "bench-bare", "-x", "200", "-y", "50"]);
  return {
    tmux,
    async launch(mode, argv, vars, cwd) {
      const flags = Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
      const command = mode === "direct" ? ["--", ...argv] : [];
      const pane = (await tmux(["new-window", "-d", "-t", "=bench-bare:", "-c", cwd, ...flags, "-P", "-F", "#{pane_id}", ...command])).trim();
      if (mode === "typed") await tmux(["send-keys", "-t", pane, "-l", "--", shellLine(argv), ";", "send-keys", "-t", pane, "Enter"]);
      return {
        kill: () =>
          tmux(["kill-pane", "-t", pane]).then(
            () => undefined,
            () => undefined,
          ),
      };
    },
    async kill() {
      await execa(tmuxBin, ["-S", socket, "kill-server"], { env, extendEnv: false, reject: false, stdin: "ignore" });
    },
  };
}
