import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe } from "node:test";
import { FAKE_HERDR_VERSIONS } from "../support/fake-herdr.ts";
import { lifecycleSuite } from "./lifecycle.suite.ts";

/**
 * The same lifecycle, with the shepherd inside herdr (the fake, whose panes are real tmux panes),
 * on every herdr generation the fake emulates (0.7.5, 0.8.2, 0.9.x).
 */
for (const version of FAKE_HERDR_VERSIONS)
  describe(`on herdr ${version}`, () =>
    lifecycleSuite({ herdr: { version } }, (world) => {
      const { fake, root } = world.herdr!;
      const state = async () =>
        JSON.parse(await readFile(join(fake.stateDir, "state.json"), "utf8")) as { panes: Record<string, unknown>; focusedPane: string | null };
      return {
        name: "herdr",
        panes: async () => {
          // Panes whose tmux pane died are gone, whatever the fake's bookkeeping says.
          const r = await fake.herdr(["pane", "list"]);
          if (r.exitCode !== 0) return [];
          const list = (JSON.parse(r.stdout) as { result: { panes: { pane_id: string }[] } }).result.panes;
          return list.map((p) => p.pane_id);
        },
        killPane: async (paneId) => {
          await fake.tmux(["kill-pane", "-t", await fake.tmuxPaneOf(paneId)]);
        },
        foreignPane: root.pane_id,
        focusSnapshot: async () => `focused=${(await state()).focusedPane}`,
      };
    }));
