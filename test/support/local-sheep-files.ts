/** A LocalSheepFiles on a test's agent dir, with paths that are never run: for tests of the files alone. */
import { type FileHostOptions, LocalSheepFiles } from "../../src/protocol/local-sheep-files.ts";

export function testSheepFiles(agentDir: string, o: Partial<FileHostOptions> = {}): LocalSheepFiles {
  return new LocalSheepFiles({
    agentDir,
    piCommand: ["pi"],
    nodePath: "/node",
    launcherPath: "/l.mjs",
    reportExitPath: "/r.sh",
    sheepExtension: "/s.ts",
    env: {},
    depth: 1,
    ...o,
  });
}
