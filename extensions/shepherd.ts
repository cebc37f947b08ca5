/**
 * pi-shepherd's entry point. Every pi that has the package installed loads it, sheep and the
 * headless pi other tools spawn included, so it imports almost nothing: pi's TypeScript loader
 * takes about a second for the shepherd's whole module graph, which a pi that may not shepherd
 * (a sheep beyond the user's depth setting) must not pay at each start.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { agentDirOf, loadSettings } from "../src/settings.ts";

export default async function shepherdEntry(pi: ExtensionAPI): Promise<void> {
  const depth = Number(process.env.PI_SHEPHERD_DEPTH ?? "0") || 0;
  if (depth > 0) {
    const { settings } = await loadSettings(agentDirOf(process.env), process.cwd());
    if (depth > settings.maxDepth) return; // a sheep may not start sheep unless the user allows it
  }
  const { shepherdExtension } = await import("./shepherd-main.ts");
  shepherdExtension(pi);
}
