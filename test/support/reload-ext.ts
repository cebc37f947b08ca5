/** Test-only extension: `/test-reload` does what `/reload` does in the TUI (RPC has no /reload). */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function reloadExt(pi: ExtensionAPI) {
  pi.registerCommand("test-reload", {
    description: "reload extensions (tests)",
    handler: async (_args, ctx) => {
      await ctx.reload();
    },
  });
}
