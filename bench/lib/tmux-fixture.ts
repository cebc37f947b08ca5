import { execa } from "execa";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { shellQuote } from "../../src/runtimes/shell-line.ts";
import { privateTmux } from "./private-tmux.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";

/**
 * The tmux runtime on a private server. A counting `tmux` wrapper comes first on the
 * shepherd's PATH: it appends one line per run to a file, then execs the real tmux, so every
 * tmux process the shepherd spawns is counted. The bench itself calls the real binary.
 */
export async function tmuxFixture(dir: string, baseEnv: NodeJS.ProcessEnv): Promise<RuntimeFixture> {
  const which = await execa("sh", ["-c", "command -v tmux"], { reject: false, env: baseEnv, extendEnv: false });
  const real = String(which.stdout).trim();
  if (which.exitCode !== 0 || !real) throw new Error("the bench needs tmux (apt-get install tmux / brew install tmux)");
  const wrapDir = join(dir, "tmux-wrapper");
  await mkdir(wrapDir, { recursive: true });
  const log = join(wrapDir, "calls.log");
  await writeFile(log, "");
  await writeFile(join(wrapDir, "tmux"), `#!/bin/sh\nprintf '%s\\n' "$*" >> ${shellQuote(log)}\nexec ${shellQuote(real)} "$@"\n`);
  await chmod(join(wrapDir, "tmux"), 0o755);

  const socket = join(dir, "tmux.sock");
  const server = await privateTmux(real, socket, { ...baseEnv, SHELL: "/bin/sh" });
  return {
    name: "tmux",
    env: { PATH: `${wrapDir}:${baseEnv.PATH ?? ""}`, PI_SHEPHERD_RUNTIME: "tmux", PI_SHEPHERD_TMUX_SOCKET: socket },
    counted: "tmux processes, counted by a wrapper first on the shepherd's PATH",
    async multiplexerCalls() {
      return (await readFile(log, "utf8")).split("\n").filter(Boolean).length;
    },
    async probeCall() {
      await execa(real, ["-S", socket, "list-panes", "-a", "-F", "#{pane_id}"], { env: baseEnv, extendEnv: false, stdin: "ignore" });
    },
    async panePid(paneId) {
      return Number((await server.tmux(["display-message", "-p", "-t", paneId, "#{pane_pid}"])).trim());
    },
    bareModes: ["typed", "direct"],
    bareLaunch: (mode, argv, env, cwd) => server.launch(mode, argv, env, cwd),
    cleanup: () => server.kill(),
  };
}
