import { join } from "node:path";
import { shellLine } from "../../src/runtimes/shell-line.ts";
import { createFakeHerdr, FAKE_HERDR_DIR } from "../../test/support/fake-herdr.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";

/**
 * The herdr runtime through the project's fake herdr (a node CLI whose panes are real tmux
 * panes). The shepherd runs "inside" a herdr workspace, as in the e2e suite. Every herdr
 * process is counted from the fake's calls.jsonl.
 */
export async function herdrFixture(dir: string, baseEnv: NodeJS.ProcessEnv): Promise<RuntimeFixture> {
  const fake = await createFakeHerdr();
  const created = await fake.herdr(["workspace", "create", "--cwd", dir, "--label", "user", "--focus"]);
  if (created.exitCode !== 0) throw new Error(`fake herdr: ${created.stderr}`);
  const root = (JSON.parse(created.stdout) as { result: { root_pane: { pane_id: string; tab_id: string; workspace_id: string } } }).result.root_pane;
  const herdr = async (args: string[]) => {
    const r = await fake.herdr(args);
    if (r.exitCode !== 0) throw new Error(`fake herdr ${args.slice(0, 2).join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    name: "herdr",
    env: {
      FAKE_HERDR_STATE_DIR: fake.env.FAKE_HERDR_STATE_DIR,
      FAKE_HERDR_TMUX_SOCKET: fake.env.FAKE_HERDR_TMUX_SOCKET,
      SHELL: "/bin/sh",
      PATH: `${FAKE_HERDR_DIR}:${baseEnv.PATH ?? ""}`,
      PI_SHEPHERD_RUNTIME: "herdr",
      PI_SHEPHERD_HERDR_BIN: fake.bin,
      HERDR_ENV: "1",
      HERDR_SOCKET_PATH: join(fake.stateDir, "herdr.sock"),
      HERDR_WORKSPACE_ID: root.workspace_id,
      HERDR_TAB_ID: root.tab_id,
      HERDR_PANE_ID: root.pane_id,
    },
    counted: "herdr processes, from the fake herdr's calls.jsonl",
    async multiplexerCalls() {
      return (await fake.calls()).length;
    },
    async probeCall() {
      await herdr(["pane", "list"]);
    },
    async panePid(paneId) {
      const tmuxPane = await fake.tmuxPaneOf(paneId);
      return Number((await fake.tmux(["display-message", "-p", "-t", tmuxPane, "#{pane_pid}"])).trim());
    },
    // herdr runs a program in a pane only by typing it into the pane's shell (`pane run`).
    bareModes: ["typed"],
    async bareLaunch(_mode, argv, env, cwd) {
      const envFlags = Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
      const out = await herdr(["tab", "create", "--workspace", root.workspace_id, "--cwd", cwd, ...envFlags, "--no-focus"]);
      const pane = (JSON.parse(out) as { result: { root_pane: { pane_id: string } } }).result.root_pane.pane_id;
      await herdr(["pane", "run", pane, shellLine(argv)]);
      return {
        kill: () =>
          herdr(["pane", "close", pane]).then(
            () => undefined,
            () => undefined,
          ),
      };
    },
    cleanup: () => fake.cleanup(),
  };
}
