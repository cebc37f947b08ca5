import { tmuxPanes } from "../support/scene.ts";
import { lifecycleSuite } from "./lifecycle.suite.ts";

lifecycleSuite({}, ({ tmux: t }) => ({
  name: "tmux",
  panes: tmuxPanes(t.socket),
  killPane: async (paneId) => {
    await t.tmux(["kill-pane", "-t", paneId]);
  },
  foreignPane: t.userPane,
  focusSnapshot: () => t.tmux(["list-windows", "-t", "user", "-F", "#{window_id} active=#{window_active}"]).then((w) => w + t.userPane),
}));
