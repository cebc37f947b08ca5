import { existsSync, realpathSync } from "node:fs";
import { basename } from "node:path";

/**
 * The pi a sheep runs: by default the very node and pi script running this shepherd (absolute
 * paths), so sheep never pick up a different pi from PATH. A `piCommand` setting overrides.
 */
export function defaultPiCommand(argv: readonly string[] = process.argv, execPath = process.execPath): string[] | undefined {
  const script = argv[1];
  if (!script || !existsSync(script)) return undefined;
  const real = realpathSync(script);
  const looksLikePi = /pi-coding-agent/.test(real) || basename(script) === "pi";
  return looksLikePi ? [execPath, real] : undefined;
}
