/**
 * The runtime-choice probe: is there a herdr we can drive right now? "Answers" means the
 * binary is 0.7.5+ and its server replies to `pane list`; anything else (not installed,
 * too old, no server, protocol mismatch) is false, so an automatic choice moves on to tmux.
 */
import { HerdrCli, resolveHerdrBin } from "./cli.ts";
import { checkHerdrVersion } from "./version.ts";

export interface HerdrProbeOptions {
  env?: NodeJS.ProcessEnv;
  bin?: string;
  /** Kept short: the probe runs before the first sheep starts. */
  timeoutMs?: number;
}

export async function herdrServerAnswers(opts: HerdrProbeOptions = {}): Promise<boolean> {
  const env = opts.env ?? process.env;
  const cli = new HerdrCli({ bin: resolveHerdrBin(env, opts.bin), env, timeoutMs: opts.timeoutMs ?? 5_000 });
  try {
    checkHerdrVersion(await cli.text(["--version"]), cli.bin);
    await cli.request(["pane", "list"], "pane_list");
    return true;
  } catch {
    return false;
  }
}
