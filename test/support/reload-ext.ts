/**
 * Test-only extension: `/test-reload` does what `/reload` does in the TUI (RPC has no /reload).
 * `/test-reload <ms>` also holds the reload that long between the old extensions' shutdown and
 * the new ones' start, so a test can make something happen while no shepherd is loaded. Load it
 * after the shepherd: shutdown handlers run in load order, so the shepherd is gone by then.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function reloadExt(pi: ExtensionAPI) {
  let pauseMs = 0;
  pi.registerCommand("test-reload", {
    description: "reload extensions (tests)",
    handler: async (args, ctx) => {
      pauseMs = Number(args.trim()) || 0;
      await ctx.reload();
    },
  });
  pi.on("session_shutdown", async (event) => {
    if (event.reason !== "reload" || pauseMs <= 0) return;
    await new Promise((r) => setTimeout(r, pauseMs));
  });
}
