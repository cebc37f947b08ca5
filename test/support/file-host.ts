/** A FileSheepHost on a test's agent dir, with paths that are never run: for tests of the files alone. */
import { type FileHostOptions, FileSheepHost } from "../../src/protocol/file-host.ts";

export function testFileHost(agentDir: string, o: Partial<FileHostOptions> = {}): FileSheepHost {
  return new FileSheepHost({
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
