import { execa } from "execa";
import { startPrivateTmux } from "../support/tmux-server.ts";
import { lifecycleSuite } from "./lifecycle.suite.ts";

lifecycleSuite(async () => {
  const t = await startPrivateTmux();
  return {
    name: "tmux",
    env: { PI_SHEPHERD_RUNTIME: "tmux", PI_SHEPHERD_TMUX_SOCKET: t.socket },
    panes: async () => {
      const r = await execa("tmux", ["-S", t.socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false });
      return r.exitCode === 0 ? String(r.stdout).split("\n") : [];
    },
    killPane: async (paneId) => {
      await t.tmux(["kill-pane", "-t", paneId]);
    },
    foreignPane: t.userPane,
    focusSnapshot: () => t.tmux(["list-windows", "-t", "user", "-F", "#{window_id} active=#{window_active}"]).then((w) => w + t.userPane),
    cleanup: () => t.cleanup(),
  };
});
