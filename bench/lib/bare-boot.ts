import { readFile, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { sheepFiles } from "../../src/compose.ts";
import { newId } from "../../src/domain/ids.ts";
import type { AgentDefinition } from "../../src/ports/types.ts";
import type { LocalSheepFiles } from "../../src/protocol/local-sheep-files.ts";
import type { LaunchSpec } from "../../src/protocol/messages.ts";
import { sheepLayout } from "../../src/protocol/layout.ts";
import { epochNow } from "./clock.ts";
import { untilGone, whenFileExists } from "./files.ts";
import type { BareMode, RuntimeFixture } from "./runtime-fixture.ts";

/** A sheep-files port configured as composeShepherd configures its own, to build identical launch specs. */
export function specHost(agentDir: string, piCommand: readonly string[], env: NodeJS.ProcessEnv): LocalSheepFiles {
  return sheepFiles({ agentDir, piCommand, env, depth: 1 });
}

/**
 * Bare pi boot: the very pi a sheep runs (argv, env and cwd from the same launch spec, sheep
 * extension included, so it reports ready the same way) started in a new pane of the same
 * server with no shepherd, no launcher and no ownership mark. Measured from asking the
 * multiplexer for the pane to the moment the sheep extension wrote status.json on
 * session_start (its updatedAt, in milliseconds).
 */
export async function bareBoot(
  mode: BareMode,
  host: LocalSheepFiles,
  fixture: RuntimeFixture,
  definition: AgentDefinition,
  cwd: string,
  /** Runs once pi is ready, before its pane goes; given pi's pid. */
  whileUp?: (pid: number) => Promise<void>,
): Promise<number> {
  const agentId = newId("agent");
  const prepared = await host.prepare({ agentId, definition, cwd, label: "bare", createdAt: new Date().toISOString() });
  const specPath = prepared.command.argv[prepared.command.argv.length - 1]!;
  const spec = JSON.parse(await readFile(specPath, "utf8")) as LaunchSpec;
  const layout = sheepLayout(dirname(specPath));
  const t0 = epochNow();
  const pane = await fixture.bareLaunch(mode, spec.argv, spec.env, spec.cwd);
  let pid: number | undefined;
  try {
    await whenFileExists(layout.status, 60_000);
    const status = JSON.parse(await readFile(layout.status, "utf8")) as { pid: number; updatedAt: string };
    pid = status.pid;
    await whileUp?.(pid);
    return Date.parse(status.updatedAt) - t0;
  } finally {
    await pane.kill();
    if (pid !== undefined) await untilGone(pid);
    await rm(layout.dir, { recursive: true, force: true });
  }
}
